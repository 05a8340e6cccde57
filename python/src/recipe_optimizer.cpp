// The training emulator's optimizer (fmtcheck/train/optimizer.hpp) for
// fmtcheck.torch.Optimizer: torch's SGD and Adam rules one float32 operation
// at a time, on float32 master weights or, under a pure low-precision recipe,
// on weights stored in its format (nearest, stochastic with the library's
// seeded stream, or Kahan-compensated), with optimizer states in float32 or
// the recipe's format. Python copies torch's parameters in and the results
// back; every rounding happens here.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>

#include "bindings.hpp"
#include "float_arrays.hpp"
#include "fmtcheck/train/optimizer.hpp"

namespace fmtcheck::python {
namespace {

class RecipeOptimizer {
 public:
  RecipeOptimizer(const std::string& recipe, const std::string& kind, float lr, float momentum, float beta1,
                  float beta2, float eps, int sr_bits, std::uint64_t sr_seed, const std::vector<std::string>& names,
                  const std::vector<std::size_t>& sizes) {
    const std::optional<train::Recipe> r = train::find_recipe(recipe);
    if (!r) throw std::invalid_argument("unknown recipe '" + recipe + "'");
    if (kind != "sgd" && kind != "adam") throw std::invalid_argument("unknown optimizer '" + kind + "': sgd or adam");
    if (!(lr > 0) || !std::isfinite(lr)) throw std::invalid_argument("lr must be a positive number");
    if (names.size() != sizes.size()) throw std::invalid_argument("one name per parameter");
    weights_ = r->weights;
    train::OptimizerConfig config;
    config.kind = kind == "sgd" ? train::OptimizerConfig::Kind::sgd : train::OptimizerConfig::Kind::adam;
    config.lr = lr;
    config.momentum = momentum;
    config.beta1 = beta1;
    config.beta2 = beta2;
    config.eps = eps;
    parameters_.reserve(names.size());
    std::vector<train::Parameter*> pointers;
    for (std::size_t i = 0; i < names.size(); ++i) {
      parameters_.push_back({names[i], std::vector<float>(sizes[i]), std::vector<float>(sizes[i])});
      pointers.push_back(&parameters_.back());
    }
    optimizer_ = std::make_unique<train::Optimizer>(config, pointers,
                                                    train::WeightStorage{r->weights, r->states, r->update, sr_bits,
                                                                         sr_seed});
  }
  std::optional<std::string> weights() const {
    return weights_ ? std::optional<std::string>(weights_->name) : std::nullopt;
  }
  // x as stored: rounded to the weight format (nearest even), or as it is.
  FloatArray stored(const Array& x) const {
    const auto v = floats_of(x, "x");
    std::vector<float> out(v.begin(), v.end());
    if (weights_ != nullptr) train::store_as(*weights_, out);
    return to_numpy(std::move(out), {out.size()});
  }
  // One step from the parameters' values and gradients (flat float32
  // arrays, in the constructor's order): (new values, [(name, nonzero, lost)]).
  nb::tuple step(const std::vector<Array>& values, const std::vector<Array>& grads) {
    if (values.size() != parameters_.size() || grads.size() != parameters_.size()) {
      throw std::invalid_argument("step takes one value and one gradient array per parameter");
    }
    for (std::size_t i = 0; i < parameters_.size(); ++i) {
      const auto v = floats_of(values[i], "value"), g = floats_of(grads[i], "gradient");
      train::Parameter& p = parameters_[i];
      if (v.size() != p.value.size() || g.size() != p.grad.size()) {
        throw std::invalid_argument("parameter " + p.name + " changed size");
      }
      p.value.assign(v.begin(), v.end());
      p.grad.assign(g.begin(), g.end());
    }
    std::vector<train::UpdateCounts> counts;
    {
      nb::gil_scoped_release unlocked;
      counts = optimizer_->step();
    }
    nb::list out_values, out_counts;
    for (const train::Parameter& p : parameters_) out_values.append(to_numpy(p.value, {p.value.size()}));
    for (const train::UpdateCounts& c : counts) out_counts.append(nb::make_tuple(c.name, c.nonzero, c.lost));
    return nb::make_tuple(out_values, out_counts);
  }

 private:
  const Format* weights_ = nullptr;
  std::vector<train::Parameter> parameters_;  // reserved: the optimizer keeps pointers into it
  std::unique_ptr<train::Optimizer> optimizer_;
};

}  // namespace

void bind_recipe_optimizer(nb::module_& m) {
  nb::class_<RecipeOptimizer>(m, "RecipeOptimizer", "fmtcheck train's optimizer under a recipe's weight storage.")
      .def(nb::init<const std::string&, const std::string&, float, float, float, float, float, int, std::uint64_t,
                    const std::vector<std::string>&, const std::vector<std::size_t>&>(),
           nb::arg("recipe"), nb::arg("kind"), nb::arg("lr"), nb::arg("momentum"), nb::arg("beta1"), nb::arg("beta2"),
           nb::arg("eps"), nb::arg("sr_bits"), nb::arg("sr_seed"), nb::arg("names"), nb::arg("sizes"))
      .def_prop_ro("weights", &RecipeOptimizer::weights, "The weights' format, None for float32 masters.")
      .def("stored", &RecipeOptimizer::stored, default_fp, nb::arg("x"), "x rounded to the weight format, flat.")
      .def("step", &RecipeOptimizer::step, default_fp, nb::arg("values"), nb::arg("grads"),
           "One step: (new values, [(name, nonzero updates, lost updates)]).");
}

}  // namespace fmtcheck::python
