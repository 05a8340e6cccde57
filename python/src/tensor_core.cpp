// Tensor-core dot products and GEMMs on a GPU preset's model.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "arrays.hpp"
#include "bindings.hpp"
#include "fmtcheck/tensor_core/gemm.hpp"
#include "fmtcheck/tensor_core/tensor_core.hpp"

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

void gemm_into(const Array& a, const Array& b, const Array& c, OutArray d, std::size_t m, std::size_t n, std::size_t k,
               const std::string& model, const std::string& input, const std::string& input_b,
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
  gemm(config, m, n, k, x, y, cs, ds);
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
  m.def("dot", &dot, nb::arg("a"), nb::arg("b"), nb::arg("c"), nb::arg("model"), nb::arg("input"), nb::arg("out"),
        "sum a[k]*b[k] + c on one tensor-core instruction chain of `model`: (bits of `out`, flags).");
  m.def("gemm_into", &gemm_into, nb::arg("a"), nb::arg("b"), nb::arg("c"), nb::arg("d"), nb::arg("m"), nb::arg("n"),
        nb::arg("k"), nb::arg("model"), nb::arg("input"), nb::arg("input_b"), nb::arg("accumulator"), nb::arg("scale_a"),
        nb::arg("scale_b"),
        nb::arg("promote_every"), nb::arg("split_k"), nb::arg("threads"),
        "D = A.B + C on `model` (fmtcheck/tensor_core/gemm.hpp; B in `input_b`), into float32 `d`.");
}

}  // namespace fmtcheck::python
