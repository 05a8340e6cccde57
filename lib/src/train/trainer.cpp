#include "fmtcheck/train/trainer.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace fmtcheck::train {

float gradient_norm(const std::vector<Parameter*>& parameters) {
  float sum = 0.0f;
  for (const Parameter* p : parameters) {
    for (const float g : p->grad) sum += g * g;
  }
  return std::sqrt(sum);
}

Trainer::Trainer(const Recipe& recipe, const TrainConfig& config, Model& model, TensorOps& ops)
    : config_(config),
      model_(model),
      ops_(ops),
      weights_(recipe.weights),
      autocast_(recipe, config.recipe, ops),
      optimizer_(config.optimizer, model.parameters(),
                 {recipe.weights, recipe.states, recipe.update, config.recipe.sr_bits, config.recipe.sr_seed}) {
  if (config.batch == 0) throw std::invalid_argument("the batch must hold at least one example");
  if (recipe.loss_scaling) scaler_.emplace(config.recipe.scaler);
  if (weights_ != nullptr) {
    for (Parameter* p : model.parameters()) store_as(*weights_, p->value);
  }
}

void Trainer::store_gradients(const std::vector<Parameter*>& params) const {
  if (weights_ == nullptr) return;
  for (Parameter* p : params) store_as(*weights_, p->grad);
}

StepRecord Trainer::step() {
  StepRecord r;
  r.step = steps_;
  r.loss_scale = static_cast<float>(loss_scale());
  autocast_.begin_step();
  r.loss = model_.train_batch(autocast_, steps_++, config_.batch, r.loss_scale).loss;
  r.tensors = autocast_.step_stats();
  const std::vector<Parameter*> params = model_.parameters();
  store_gradients(params);

  // GradScaler.unscale_: check the scaled gradients for inf/NaN, multiply by
  // the float32 reciprocal of the scale (computed in double, as torch does).
  bool found_inf = false;
  if (scaler_) {
    const auto inverse = static_cast<float>(1.0 / scaler_->scale());
    for (Parameter* p : params) {
      for (float& g : p->grad) {
        found_inf = found_inf || !std::isfinite(g);
        g = g * inverse;
      }
    }
    store_gradients(params);
  }
  r.grad_norm = gradient_norm(params);
  if (scaler_) r.skipped = scaler_->update(found_inf);
  if (r.skipped) return r;
  // torch.nn.utils.clip_grad_norm_: coefficient max_norm / (norm + 1e-6), clamped to 1.
  if (config_.clip > 0.0f) {
    const float coefficient = std::min(config_.clip / (r.grad_norm + 1e-6f), 1.0f);
    for (Parameter* p : params) {
      for (float& g : p->grad) g = g * coefficient;
    }
    store_gradients(params);
  }
  r.updates = optimizer_.step();
  return r;
}

Evaluation Trainer::evaluate() { return evaluate(*find_recipe("fp32")); }

Evaluation Trainer::evaluate(const Recipe& recipe) {
  Autocast casts(recipe, config_.recipe, ops_);
  return model_.evaluate(casts);
}

}  // namespace fmtcheck::train
