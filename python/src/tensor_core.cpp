// Tensor-core dot products and GEMMs on a GPU preset's model.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "arrays.hpp"
#include "bindings.hpp"
#include "fmtcheck/tensor_core/gemm.hpp"
#include "fmtcheck/tensor_core/tensor_core.hpp"
#include "gpu.hpp"

#if defined(FMTCHECK_HAS_CUDA)
#include "fmtcheck/cuda/emulated_gemm.hpp"
#endif

namespace fmtcheck::python {
namespace {

nb::tuple dot(const Array& a, const Array& b, std::uint64_t c, const std::string& model, const std::string& input,
              const std::string& out) {
  const Format in = format_from_string(input), to = format_from_string(out);
  if (!is_tensor_core_output(to)) throw std::invalid_argument("a tensor core writes fp32 or fp16, not " + to.name);
  const DotModel dm = tensor_core_model(model).arithmetic_for(in);
  const std::vector<std::uint64_t> x = codes_of(a, "a"), y = codes_of(b, "b");
  if (x.size() != y.size()) throw std::invalid_argument("a and b must have the same length");
  Conversion r;
  {
    nb::gil_scoped_release unlocked;
    r = dot_product_add(dm, in, x, y, c, to);
  }
  return nb::make_tuple(r.bits, describe(r.flags));
}

GemmConfig gemm_config(const std::string& model, const std::string& input, const std::string& input_b,
                       const std::string& accumulator, float scale_a, float scale_b, std::size_t promote_every,
                       std::size_t split_k, unsigned threads) {
  GemmConfig config;
  config.input = format_from_string(input);
  const Format b_format = format_from_string(input_b);
  const TensorCoreModel& preset = tensor_core_model(model);
  if (b_format == config.input) {
    config.model = preset.arithmetic_for(config.input);
  } else {
    const auto dot = preset.for_inputs(config.input, b_format);
    if (!dot) {
      throw std::invalid_argument("model '" + preset.name + "' has no published arithmetic for " + config.input.name +
                                  " x " + b_format.name + " inputs");
    }
    config.model = *dot;
    config.input_b = b_format;
  }
  config.accumulator = format_from_string(accumulator);
  config.scale_a = scale_a;
  config.scale_b = scale_b;
  config.promote_every = promote_every;
  config.split_k = split_k;
  config.threads = threads;
  return config;
}

// device "cuda": gemm() on the GPU for host arrays (the same bits).
void gemm_into(const Array& a, const Array& b, const Array& c, OutArray d, std::size_t m, std::size_t n, std::size_t k,
               const std::string& model, const std::string& input, const std::string& input_b,
               const std::string& accumulator, float scale_a, float scale_b, std::size_t promote_every,
               std::size_t split_k, unsigned threads, const std::string& device) {
  const GemmConfig config =
      gemm_config(model, input, input_b, accumulator, scale_a, scale_b, promote_every, split_k, threads);
  if (device != "cpu" && device != "cuda") throw std::invalid_argument("device='" + device + "': expected cpu or cuda");
  if (device == "cuda") use_gpu(0);
  const auto widen32 = [](const Array& x, const char* what) {
    const std::vector<std::uint64_t> wide = codes_of(x, what);
    return std::vector<std::uint32_t>(wide.begin(), wide.end());
  };
  const std::vector<std::uint32_t> x = widen32(a, "a"), y = widen32(b, "b");
  if (x.size() != m * k || y.size() != k * n) throw std::invalid_argument("A must be M x K and B K x N");
  if (c.dtype() != nb::dtype<float>() || c.size() != m * n) throw nb::type_error("C must be an M x N float32 array");
  const std::span<const float> cs(static_cast<const float*>(c.data()), c.size());
  const std::span<float> ds = out_span<float>(d, m * n);
  nb::gil_scoped_release unlocked;
#if defined(FMTCHECK_HAS_CUDA)
  if (device == "cuda") {
    cuda::gemm_on_gpu(config, m, n, k, x, y, cs, ds);
    return;
  }
#endif
  gemm(config, m, n, k, x, y, cs, ds);
}

// gemm() on the GPU for arrays in CUDA memory: A and B containers of 1, 2 or
// 4 bytes, C and D float32. Returns how many outputs the CPU finished
// (NaN/inf lines, models of exact alignment: emulated_gemm.hpp).
std::size_t gpu_gemm_into(const CudaArray& a, const CudaArray& b, const CudaArray& c, CudaOutArray d, std::size_t m,
                          std::size_t n, std::size_t k, const std::string& model, const std::string& input,
                          const std::string& input_b, const std::string& accumulator, float scale_a, float scale_b,
                          std::size_t promote_every, std::size_t split_k) {
  const GemmConfig config = gemm_config(model, input, input_b, accumulator, scale_a, scale_b, promote_every, split_k, 0);
  if (a.size() != m * k || b.size() != k * n) throw std::invalid_argument("A must be M x K and B K x N");
  const auto is_floats = [&](const auto& x) { return x.dtype() == nb::dtype<float>() && x.size() == m * n; };
  if (!is_floats(c) || !is_floats(d)) throw nb::type_error("C and D must be M x N float32 arrays");
  const int gpu = a.device_id();
  if (b.device_id() != gpu || c.device_id() != gpu || d.device_id() != gpu) {
    throw std::invalid_argument("A, B, C and D must be on one GPU");
  }
  use_gpu(gpu);
  std::size_t cpu_outputs = 0;
#if defined(FMTCHECK_HAS_CUDA)
  nb::gil_scoped_release unlocked;
  const cuda::DeviceCodes da{a.data(), static_cast<int>(a.dtype().bits / 8)};
  const cuda::DeviceCodes db{b.data(), static_cast<int>(b.dtype().bits / 8)};
  cpu_outputs = cuda::gemm_device_buffers(config, m, n, k, da, db, static_cast<const float*>(c.data()),
                                          static_cast<float*>(d.data())).cpu_outputs;
#endif
  return cpu_outputs;
}

}  // namespace

void bind_tensor_core(nb::module_& m) {
  m.def("models", [] {
          nb::list out;
          for (const TensorCoreModel& t : tensor_core_models()) {
            nb::dict d;
            d["name"] = t.name;
            d["description"] = t.description;
            nb::list inputs;
            for (const auto& e : t.entries) inputs.append(e.input);
            d["inputs"] = inputs;
            out.append(d);
          }
          return out;
        }, "The tensor-core presets: name, description, input formats.");
  m.def("dot", &dot, default_fp, nb::arg("a"), nb::arg("b"), nb::arg("c"), nb::arg("model"), nb::arg("input"), nb::arg("out"),
        "sum a[k]*b[k] + c on one tensor-core instruction chain of `model`: (bits of `out`, flags).");
  m.def("gemm_into", &gemm_into, default_fp, nb::arg("a"), nb::arg("b"), nb::arg("c"), nb::arg("d"), nb::arg("m"), nb::arg("n"),
        nb::arg("k"), nb::arg("model"), nb::arg("input"), nb::arg("input_b"), nb::arg("accumulator"), nb::arg("scale_a"),
        nb::arg("scale_b"),
        nb::arg("promote_every"), nb::arg("split_k"), nb::arg("threads"), nb::arg("device") = "cpu",
        "D = A.B + C on `model` (fmtcheck/tensor_core/gemm.hpp; B in `input_b`), into float32 `d`, on the CPU\n"
        "or (device \"cuda\") the GPU.");
  m.def("gpu_gemm_into", &gpu_gemm_into, default_fp, nb::arg("a"), nb::arg("b"), nb::arg("c"), nb::arg("d"), nb::arg("m"),
        nb::arg("n"), nb::arg("k"), nb::arg("model"), nb::arg("input"), nb::arg("input_b"), nb::arg("accumulator"),
        nb::arg("scale_a"), nb::arg("scale_b"), nb::arg("promote_every"), nb::arg("split_k"),
        "gemm_into on the GPU for arrays in CUDA memory; returns how many outputs the CPU finished.");
}

}  // namespace fmtcheck::python
