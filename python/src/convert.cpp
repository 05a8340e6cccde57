// convert, decode and the single-value conversions.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include "arrays.hpp"
#include "bindings.hpp"
#include "fmtcheck/batch/convert_parallel.hpp"
#include "fmtcheck/core/convert.hpp"
#include "fmtcheck/core/decode.hpp"
#include "fmtcheck/core/exact_value.hpp"
#include "fmtcheck/core/stochastic_outcomes.hpp"
#include "gpu.hpp"

#if defined(FMTCHECK_HAS_CUDA)
#include "fmtcheck/cuda/emulated_convert.hpp"
#endif

namespace fmtcheck::python {
namespace {

nb::dict convert_array(const Array& in, const std::string& to_name, const std::optional<std::string>& from,
                       OutArray out, const std::string& round, const std::string& overflow, const std::string& subnormals,
                       const std::string& tininess, const std::string& nan, int sr_bits, std::uint64_t seed,
                       unsigned threads) {
  const Format to = format_from_string(to_name);
  const Policy p = policy_from_text(policy_text(round, overflow, subnormals, tininess, nan, sr_bits));
  const BatchSource source = batch_source(in, from);
  const std::size_t n = source.size();
  FlagCounts counts;
  const auto run = [&](auto span) {
    nb::gil_scoped_release unlocked;
    counts = convert_parallel(source, to, p, span, seed, threads);
  };
  switch (to.storage_bits) {
    case 8: run(out_span<std::uint8_t>(out, n)); break;
    case 16: run(out_span<std::uint16_t>(out, n)); break;
    case 32: run(out_span<std::uint32_t>(out, n)); break;
    default: run(out_span<std::uint64_t>(out, n)); break;
  }
  return flag_dict(counts);
}

void decode_array(const Array& codes, const std::string& from, OutArray out, unsigned threads) {
  const Format f = format_from_string(from);
  const std::size_t n = codes.size();
  if (f.storage_bits == 64) {
    const std::span<double> values = out_span<double>(out, n);
    const auto* bits = static_cast<const std::uint64_t*>(codes.data());
    if (codes.dtype() != nb::dtype<std::uint64_t>()) throw nb::type_error(("codes of " + f.name + " are 64-bit").c_str());
    nb::gil_scoped_release unlocked;
    for (std::size_t i = 0; i < n; ++i) values[i] = to_double(f, bits[i]);
    return;
  }
  const BatchSource source = batch_source(codes, f.name);
  if (source.from != f) throw nb::type_error(("decode takes codes of " + f.name + ", not float values").c_str());
  if (out.dtype() == nb::dtype<float>()) {
    const std::span<float> values = out_span<float>(out, n);
    nb::gil_scoped_release unlocked;
    decode_parallel(source, values, threads);
    return;
  }
  // Formats float32 cannot hold (fp64, wide user formats) decode to float64, value by value.
  const std::span<double> values = out_span<double>(out, n);
  nb::gil_scoped_release unlocked;
  std::visit([&](auto v) {
    for (std::size_t i = 0; i < n; ++i) values[i] = to_double(f, static_cast<std::uint64_t>(v[i]));
  }, source.values);
}

nb::tuple convert_scalar(const nb::object& x, const std::string& to_name, const std::string& round,
                         const std::string& overflow, const std::string& subnormals, const std::string& tininess,
                         const std::string& nan, int sr_bits, std::uint32_t sr_random) {
  const Format to = format_from_string(to_name);
  PolicyText text = policy_text(round, overflow, subnormals, tininess, nan, sr_bits);
  text.sr_random = sr_random;
  const Policy p = policy_from_text(text);
  // Text is rounded once from its exact decimal value; a Python float is a double.
  const Conversion c = nb::isinstance<nb::str>(x) ? convert_text(nb::cast<std::string>(x), to, p)
                                                   : convert(nb::cast<double>(x), to, p);
  return nb::make_tuple(c.bits, describe(c.flags));
}

// Every outcome of stochastic rounding one value: ([(bits, flags, draws)], mean, bias).
nb::tuple stochastic_scalar(const nb::object& x, const std::string& to_name, const std::string& round,
                            const std::string& overflow, const std::string& subnormals, const std::string& tininess,
                            const std::string& nan, int sr_bits) {
  const Format to = format_from_string(to_name);
  const Policy p = policy_from_text(policy_text(round, overflow, subnormals, tininess, nan, sr_bits));
  std::optional<ExactValue> input;
  if (nb::isinstance<nb::str>(x)) {
    std::string error;
    input = ExactValue::parse(nb::cast<std::string>(x), &error);
    if (!input) throw std::invalid_argument(error);
  } else {
    input = ExactValue::from_unpacked(unpack(nb::cast<double>(x)));
  }
  const std::vector<StochasticOutcome> outcomes = stochastic_outcomes(input->to_unpacked(), to, p);
  nb::list rows;
  for (const StochasticOutcome& o : outcomes) rows.append(nb::make_tuple(o.result.bits, describe(o.result.flags), o.draws));
  const auto mean = stochastic_mean(outcomes, to, *input);
  return nb::make_tuple(rows, mean ? nb::cast(mean->mean) : nb::none(), mean ? nb::cast(mean->bias) : nb::none());
}

// The GPU's conversion of a float32 array in CUDA memory into `out` there.
nb::dict gpu_convert_array(const CudaArray& in, const std::string& to_name, CudaOutArray out, const std::string& round,
                           const std::string& overflow, const std::string& subnormals, const std::string& tininess,
                           const std::string& nan, int sr_bits, std::uint64_t seed) {
  const Format to = format_from_string(to_name);
  const Policy p = policy_from_text(policy_text(round, overflow, subnormals, tininess, nan, sr_bits));
  if (in.dtype() != nb::dtype<float>()) throw nb::type_error("the GPU converts float32 arrays");
  if (out.size() != in.size() || static_cast<int>(out.dtype().bits) != to.storage_bits ||
      out.device_id() != in.device_id()) {
    throw nb::type_error(("out must hold " + std::to_string(in.size()) + " codes of " +
                          std::to_string(to.storage_bits) + " bits on the input's GPU").c_str());
  }
  use_gpu(in.device_id());
  FlagCounts counts;
#if defined(FMTCHECK_HAS_CUDA)
  nb::gil_scoped_release unlocked;
  counts = cuda::convert_device_buffer(static_cast<const float*>(in.data()), in.size(), to, p, out.data(), seed);
#else
  (void)p, (void)seed;  // use_gpu has said this build has no CUDA
#endif
  return flag_dict(counts);
}

// The GPU's decoding of codes in CUDA memory into `out` there (float32 or,
// for formats float32 cannot hold, float64).
void gpu_decode_array(const CudaArray& codes, const std::string& from_name, CudaOutArray out) {
  const Format from = format_from_string(from_name);
  if (static_cast<int>(codes.dtype().bits) != from.storage_bits) {
    throw nb::type_error(("decode takes codes of " + from.name + " (" + std::to_string(from.storage_bits) +
                          "-bit containers), not " + std::to_string(codes.dtype().bits) + "-bit elements")
                             .c_str());
  }
  use_gpu(codes.device_id());
#if defined(FMTCHECK_HAS_CUDA)
  const int bits = cuda::decodes_to_float32(from) ? 32 : 64;
  if (out.size() != codes.size() || out.dtype().code != static_cast<std::uint8_t>(nb::dlpack::dtype_code::Float) ||
      out.dtype().bits != bits || out.device_id() != codes.device_id()) {
    throw nb::type_error(("out must hold " + std::to_string(codes.size()) + " float" + std::to_string(bits) +
                          " values on the codes' GPU").c_str());
  }
  nb::gil_scoped_release unlocked;
  cuda::decode_device_buffer(codes.data(), codes.size(), from, out.data());
#else
  (void)out;  // use_gpu has said this build has no CUDA
#endif
}

}  // namespace

void bind_convert(nb::module_& m) {
  m.def("convert_into", &convert_array, default_fp, nb::arg("array"), nb::arg("to"), nb::arg("from_").none(), nb::arg("out"),
        FMTCHECK_POLICY_ARGS, nb::arg("seed") = 0, nb::arg("threads") = 0,
        "Converts `array` into format `to`, writing the container bits into `out` (unsigned integers of the\n"
        "format's storage width, as many as the input), on `threads` threads (0: every core), without the GIL.\n"
        "Returns the flag counts. fmtcheck.convert is the friendly front.");
  m.def("gpu_decode_into", &gpu_decode_array, default_fp, nb::arg("codes"), nb::arg("from_"), nb::arg("out"),
        "Decodes codes of `from_` in CUDA memory into `out` there (float32, or float64 for formats float32\n"
        "cannot hold: _core.float32_holds). fmtcheck.decode is the friendly front.");
  m.def("gpu_convert_into", &gpu_convert_array, default_fp, nb::arg("array"), nb::arg("to"), nb::arg("out"), FMTCHECK_POLICY_ARGS,
        nb::arg("seed") = 0,
        "convert_into on the GPU: float32 `array` and `out` in CUDA memory (the same bits as the CPU's).");
  m.def("decode_into", &decode_array, default_fp, nb::arg("codes"), nb::arg("from_"), nb::arg("out"), nb::arg("threads") = 0,
        "Decodes codes of format `from_` into `out` (float32, or float64 for formats float32 cannot hold).");
  m.def("convert_value", &convert_scalar, default_fp, nb::arg("x"), nb::arg("to"), FMTCHECK_POLICY_ARGS, nb::arg("sr_random") = 0,
        "One value (a float, or text such as \"0.1\" or \"1/3\", taken exactly) rounded once into `to`: (bits, flags).");
  m.def("stochastic_outcomes", &stochastic_scalar, default_fp, nb::arg("x"), nb::arg("to"), FMTCHECK_POLICY_ARGS,
        "Every outcome of stochastic rounding one value into `to`: ([(bits, flags, draws)], mean, bias).");
  m.def("to_exact_decimal", [](const std::string& f, std::uint64_t bits) { return to_exact_decimal(format_from_string(f), bits); },
        nb::arg("format"), nb::arg("bits"), "The exact decimal value of a code: \"0.000000059604644775390625\".");
}

}  // namespace fmtcheck::python
