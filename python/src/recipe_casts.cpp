// The training emulator's precision layer (fmtcheck/train/autocast.hpp) for
// fmtcheck.torch.emulate: a recipe's operand casts and scaling, the GEMM of a
// tensor-core preset and the rounding to the activation format. Python
// composes these calls; every rounding happens here, in the library.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>

#include "bindings.hpp"
#include "float_arrays.hpp"
#include "fmtcheck/train/autocast.hpp"
#include "fmtcheck/train/exact_math.hpp"
#include "gpu.hpp"

#if defined(FMTCHECK_HAS_CUDA)
#include "fmtcheck/cuda/emulated_gemm.hpp"
#endif

namespace fmtcheck::python {
namespace {

using train::Quantized;
using train::Role;

Role role_of(const std::string& role) {
  if (role == "forward") return Role::forward;
  if (role == "gradient") return Role::gradient;
  throw std::invalid_argument("role must be 'forward' or 'gradient', not '" + role + "'");
}

// The tensor-core model of `gpu`: train's --gpu names (hopper = its wgmma
// model) or any preset of `fmtcheck mma --model`.
const TensorCoreModel& gpu_preset(const std::string& gpu) {
  if (const TensorCoreModel* m = train::gpu_model(gpu)) return *m;
  throw std::invalid_argument("unknown gpu '" + gpu + "' (fmtcheck.models() lists the presets)");
}

// One recipe on one GPU: the emulated hardware and the Autocast over it,
// alive as long as the Python object (the Autocast keeps delayed scaling's
// amax histories across steps).
class RecipeCasts {
 public:
  // device "cuda": the GEMMs (block-scaled ones too) run on the GPU (the same bits), the casts on the CPU.
  RecipeCasts(const std::string& recipe, const std::string& gpu, const std::string& device)
      : model_(gpu_preset(gpu)), ops_(model_) {
    if (device != "cpu" && device != "cuda") throw std::invalid_argument("device='" + device + "': expected cpu or cuda");
    if (device == "cuda") {
      use_gpu(0);
#if defined(FMTCHECK_HAS_CUDA)
      ops_.run_gemms_with(
          [](const GemmConfig& config, std::size_t m, std::size_t n, std::size_t k, std::span<const std::uint32_t> a,
             std::span<const std::uint32_t> b, std::span<const float> c, std::span<float> d) {
            // The runner's B is N×K (gemm_tn's); the GPU's gemm takes K×N.
            cuda::gemm_on_gpu(config, m, n, k, a, train::transpose<std::uint32_t>(b, n, k), c, d);
          },
          [](const BlockScaledGemmConfig& config, std::size_t m, std::size_t n, std::size_t k,
             std::span<const std::uint32_t> a, std::span<const std::uint32_t> b, std::span<const std::uint8_t> sa,
             std::span<const std::uint8_t> sb, std::span<float> d) {
            cuda::gemm_block_scaled_on_gpu(config, m, n, k, a, b, sa, sb, d);
          });
#endif
    }
    const std::optional<train::Recipe> r = train::find_recipe(recipe);
    if (!r) {
      std::string known;
      for (const std::string_view n : train::recipe_names()) known += (known.empty() ? "" : ", ") + std::string(n);
      throw std::invalid_argument("unknown recipe '" + recipe + "' (known: " + known + "; or " +
                                  std::string(train::scaled_recipe_syntax) + ")");
    }
    if (const auto reason = train::unsupported(*r, model_)) {
      throw std::invalid_argument(*reason + (gpu == model_.name ? "" : " (gpu " + gpu + ")"));
    }
    autocast_ = std::make_unique<train::Autocast>(*r, train::RecipeOptions{}, ops_);
  }
  bool float32() const { return autocast_->float32(); }
  // The preset `gpu` names (hopper: hopper-wgmma), for GEMMs on operands cast elsewhere (_scaled_mm).
  const std::string& model() const { return model_.name; }
  std::optional<std::string> activation() const {
    const Format* f = autocast_->recipe().activation;
    return f ? std::optional<std::string>(f->name) : std::nullopt;
  }
  Quantized operand(const std::string& name, const std::string& role, const Array& x) {
    if (x.ndim() != 2) throw std::invalid_argument("operand " + name + " must be a matrix");
    const auto v = floats_of(x, "x");
    return autocast_->operand(name, role_of(role), v, x.shape(0), x.shape(1));
  }
  Quantized columnwise(const std::string& name, const std::string& role, const Quantized& rowwise,
                       const Array& source) {
    return autocast_->columnwise(name, role_of(role), rowwise, floats_of(source, "source"));
  }
  FloatArray gemm(const Quantized& a, const Quantized& b) {
    std::vector<float> d;
    {
      nb::gil_scoped_release unlocked;
      d = autocast_->gemm(a, b);
    }
    return to_numpy(std::move(d), {a.rows, b.rows});
  }
  FloatArray to_activation(const std::string& name, const Array& x) {
    const auto v = floats_of(x, "x");
    return to_numpy(autocast_->to_activation(name, {v.begin(), v.end()}), {v.size()});
  }
  FloatArray activation_matmul(const std::string& name, const Array& a, const Array& b, std::size_t m, std::size_t n,
                               std::size_t k) {
    const auto x = floats_of(a, "a"), y = floats_of(b, "b");
    if (x.size() != m * k || y.size() != n * k) throw std::invalid_argument("A must be M x K and B N x K");
    return to_numpy(autocast_->activation_matmul(name, x, y, m, n, k), {m, n});
  }
  void begin_step() { autocast_->begin_step(); }
  nb::list step_stats() const {
    nb::list out;
    for (const auto& [name, s] : autocast_->step_stats()) {
      out.append(nb::make_tuple(name, s.amax, s.scale, flag_dict(s.flags)));
    }
    return out;
  }

 private:
  const TensorCoreModel& model_;
  train::EmulatedOps ops_;
  std::unique_ptr<train::Autocast> autocast_;
};

}  // namespace

void bind_recipe_casts(nb::module_& m) {
  // torch's autograd graphs keep RecipeCasts and Quantized objects (a backward's saved casts) alive in
  // module globals until interpreter exit, after the extension is torn down: nanobind would report
  // each as a leak although nothing is lost.
  nb::set_leak_warnings(false);
  nb::class_<Quantized>(m, "Quantized", "A GEMM operand cast by a recipe (rows x cols codes and its scales).")
      .def_ro("rows", &Quantized::rows)
      .def_ro("cols", &Quantized::cols)
      .def_ro("scale_inv", &Quantized::scale_inv);
  nb::class_<RecipeCasts>(m, "RecipeCasts", "A recipe of `fmtcheck train` on a GPU's tensor-core model.")
      .def(nb::init<const std::string&, const std::string&, const std::string&>(), nb::arg("recipe"), nb::arg("gpu"),
           nb::arg("device") = "cpu")
      .def_prop_ro("float32", &RecipeCasts::float32)
      .def_prop_ro("activation", &RecipeCasts::activation)
      .def_prop_ro("model", &RecipeCasts::model, "The tensor-core preset, a name of fmtcheck.models().")
      .def("operand", &RecipeCasts::operand, default_fp, nb::arg("name"), nb::arg("role"), nb::arg("x"))
      .def("columnwise", &RecipeCasts::columnwise, default_fp, nb::arg("name"), nb::arg("role"), nb::arg("rowwise"),
           nb::arg("source"))
      .def("gemm", &RecipeCasts::gemm, default_fp, nb::arg("a"), nb::arg("b"), "(a.scale_inv b.scale_inv) A.B^T, float32")
      .def("to_activation", &RecipeCasts::to_activation, default_fp, nb::arg("name"), nb::arg("x"))
      .def("activation_matmul", &RecipeCasts::activation_matmul, default_fp, nb::arg("name"), nb::arg("a"), nb::arg("b"),
           nb::arg("m"), nb::arg("n"), nb::arg("k"))
      .def("begin_step", &RecipeCasts::begin_step)
      .def("step_stats", &RecipeCasts::step_stats, "[(name, amax, scale, flag counts)] of this step");
  m.def("recipes", [] {
    std::vector<std::string> out;
    for (const std::string_view n : train::recipe_names()) out.emplace_back(n);
    return out;
  }, "The recipes of `fmtcheck train`.");
}

}  // namespace fmtcheck::python
