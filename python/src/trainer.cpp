// `fmtcheck train --model mlp|transformer` one step at a time, for the tests
// that hold fmtcheck.torch.emulate to it: the emulator's own loss, casts and
// weights after every step, from the same Task and Trainer the CLI runs.
#include <nanobind/stl/string.h>

#include <memory>

#include "bindings.hpp"
#include "float_arrays.hpp"
#include "fmtcheck/train/task.hpp"
#include "fmtcheck/train/trainer.hpp"

namespace fmtcheck::python {
namespace {

class Trainer {
 public:
  Trainer(const std::string& model, const std::string& data, const std::string& recipe, const std::string& gpu,
          std::uint64_t seed, std::size_t batch, double init_scale, int growth_interval)
      : task_(model, data), model_(task_.make_model(seed)) {
    const TensorCoreModel* tc = train::gpu_model(gpu);
    if (tc == nullptr) throw std::invalid_argument("unknown gpu '" + gpu + "' for fmtcheck train");
    const std::optional<train::Recipe> r = train::find_recipe(recipe);
    if (!r) throw std::invalid_argument("unknown recipe '" + recipe + "'");
    if (const auto reason = train::unsupported(*r, *tc)) throw std::invalid_argument(*reason);
    ops_ = std::make_unique<train::EmulatedOps>(*tc);
    train::TrainConfig config;
    config.batch = batch;
    config.seed = seed;
    config.recipe.scaler.init_scale = init_scale;  // the fp16 recipes' GradScaler
    config.recipe.scaler.growth_interval = growth_interval;
    trainer_ = std::make_unique<train::Trainer>(*r, config, *model_, *ops_);
  }
  nb::dict step() {
    const train::StepRecord r = trainer_->step();
    nb::dict d;
    d["loss"] = r.loss;
    d["loss_scale"] = r.loss_scale;
    d["skipped"] = r.skipped;
    d["grad_norm"] = r.grad_norm;
    nb::dict tensors;  // what each cast did: name -> flag counts
    for (const auto& [name, stats] : r.tensors) tensors[name.c_str()] = flag_dict(stats.flags);
    d["tensors"] = tensors;
    nb::list updates;  // per parameter: (name, nonzero updates, updates the stored weight lost)
    for (const train::UpdateCounts& u : r.updates) updates.append(nb::make_tuple(u.name, u.nonzero, u.lost));
    d["updates"] = updates;
    return d;
  }
  // name -> a copy of the float32 values, flat (fc1.weight 32x64 row-major, ...).
  nb::dict parameters() {
    nb::dict d;
    for (const train::Parameter* p : model_->parameters()) d[p->name.c_str()] = to_numpy(p->value, {p->value.size()});
    return d;
  }

 private:
  train::Task task_;
  std::unique_ptr<train::Model> model_;
  std::unique_ptr<train::EmulatedOps> ops_;
  std::unique_ptr<train::Trainer> trainer_;
};

}  // namespace

void bind_trainer(nb::module_& m) {
  nb::class_<Trainer>(m, "Trainer", "fmtcheck train's mlp or transformer (SGD, momentum 0.9, lr 0.05).")
      .def(nb::init<const std::string&, const std::string&, const std::string&, const std::string&, std::uint64_t,
                    std::size_t, double, int>(),
           nb::arg("model"), nb::arg("data"), nb::arg("recipe"), nb::arg("gpu") = "hopper", nb::arg("seed") = 0,
           nb::arg("batch") = 32, nb::arg("init_scale") = 65536.0, nb::arg("growth_interval") = 2000)
      .def("step", &Trainer::step, default_fp, "One training step: {loss, loss_scale, skipped, grad_norm, tensors, updates}.")
      .def("parameters", &Trainer::parameters, "The float32 weights now, by name.");
}

}  // namespace fmtcheck::python
