// The training loop, written once for every recipe and every TensorOps:
// forward and backward under the recipe's Autocast, loss scaling with torch's
// GradScaler (unscale, then clip, then step or skip), the optimizer on
// float32 master weights or on weights stored in the recipe's low format,
// and evaluation in float32 or under another recipe's casts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fmtcheck/train/autocast.hpp"
#include "fmtcheck/train/model.hpp"
#include "fmtcheck/train/optimizer.hpp"
#include "fmtcheck/train/recipe.hpp"

namespace fmtcheck::train {

struct TrainConfig {
  std::size_t batch = 32;
  OptimizerConfig optimizer;
  float clip = 0.0f;  // max gradient norm; 0: no clipping
  std::uint64_t seed = 0;
  RecipeOptions recipe;
};

// What one step did.
struct StepRecord {
  std::size_t step = 0;
  float loss = 0;        // mean cross-entropy of the batch, unscaled
  float grad_norm = 0;   // of the unscaled float32 gradients (before clipping)
  float loss_scale = 1;  // the scale the step ran with
  bool skipped = false;  // GradScaler found inf/NaN: no update
  std::vector<std::pair<std::string, TensorStats>> tensors;
  std::vector<UpdateCounts> updates;  // per parameter; empty when skipped
};

class Trainer {
 public:
  // Trains `model` (kept by reference) from its current weights, rounded to
  // the recipe's weight format when it has one.
  Trainer(const Recipe& recipe, const TrainConfig& config, Model& model, TensorOps& ops);
  // Step s trains on batch s of the training examples.
  StepRecord step();
  // The model in float32 on the held-out examples.
  Evaluation evaluate();
  // The same forward pass under `recipe`'s casts and tensor cores
  // (inference in another precision than training).
  Evaluation evaluate(const Recipe& recipe);
  [[nodiscard]] double loss_scale() const { return scaler_ ? scaler_->scale() : 1.0; }

 private:
  // Gradients stored in the weight format (pure low-precision recipes).
  void store_gradients(const std::vector<Parameter*>& params) const;

  TrainConfig config_;
  Model& model_;
  TensorOps& ops_;
  const Format* weights_;
  Autocast autocast_;
  Optimizer optimizer_;
  std::optional<GradScaler> scaler_;
  std::size_t steps_ = 0;
};

// The float32 gradient norm sqrt(sum g²), parameters and values in order.
float gradient_norm(const std::vector<Parameter*>& parameters);

}  // namespace fmtcheck::train
