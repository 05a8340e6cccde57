#include "fmtcheck/train/trainer.hpp"

#include <cmath>
#include <stdexcept>

namespace fmtcheck::train {
namespace {

Digits slice(const Digits& d, std::size_t first, std::size_t count) {
  Digits s;
  const auto px = static_cast<std::ptrdiff_t>(DigitsMlp::inputs);
  s.pixels.assign(d.pixels.begin() + static_cast<std::ptrdiff_t>(first) * px,
                  d.pixels.begin() + static_cast<std::ptrdiff_t>(first + count) * px);
  s.labels.assign(d.labels.begin() + static_cast<std::ptrdiff_t>(first),
                  d.labels.begin() + static_cast<std::ptrdiff_t>(first + count));
  return s;
}

}  // namespace

float gradient_norm(const std::vector<Parameter*>& parameters) {
  float sum = 0.0f;
  for (const Parameter* p : parameters) {
    for (const float g : p->grad) sum += g * g;
  }
  return std::sqrt(sum);
}

Trainer::Trainer(const Recipe& recipe, const TrainConfig& config, const Digits& data, TensorOps& ops)
    : recipe_(recipe),
      config_(config),
      data_(data),
      ops_(ops),
      autocast_(recipe, config.recipe, ops),
      model_(config.seed),
      optimizer_(config.optimizer, model_.parameters()) {
  if (config.batch == 0) throw std::invalid_argument("the batch must hold at least one image");
  if (config.train_images == 0 || config.train_images >= data.count()) {
    throw std::invalid_argument("the data has " + std::to_string(data.count()) + " images: too few to train on " +
                                std::to_string(config.train_images) + " and evaluate on the rest");
  }
  train_ = slice(data, 0, config.train_images);
  held_out_ = slice(data, config.train_images, data.count() - config.train_images);
  if (recipe.loss_scaling) scaler_.emplace(config.recipe.scaler);
}

StepRecord Trainer::step() {
  StepRecord r;
  r.step = steps_;
  r.loss_scale = static_cast<float>(loss_scale());
  autocast_.begin_step();
  const Batch batch = take_batch(train_, steps_ * config_.batch, config_.batch);
  ++steps_;
  r.loss = model_.forward_backward(autocast_, batch, r.loss_scale).loss;
  r.tensors = autocast_.step_stats();
  const std::vector<Parameter*> params = model_.parameters();

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
  }
  optimizer_.step();
  return r;
}

Evaluation Trainer::evaluate() {
  EmulatedOps unused(*gpu_model("exact"));
  Autocast fp32(*find_recipe("fp32"), config_.recipe, unused);
  const Batch all = take_batch(held_out_, 0, held_out_.count());
  const LossResult r = model_.evaluate(fp32, all);
  return {r.loss, static_cast<double>(r.correct) / static_cast<double>(held_out_.count())};
}

}  // namespace fmtcheck::train
