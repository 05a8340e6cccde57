// Optimizers with torch's update rules written as one float32 operation per
// step of the formula, in the order below, on float32 master weights or on
// weights stored in a low format (pure low-precision training).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "fmtcheck/train/layers.hpp"
#include "fmtcheck/train/recipe.hpp"

namespace fmtcheck::train {

struct OptimizerConfig {
  enum class Kind : std::uint8_t { sgd, adam } kind = Kind::sgd;
  float lr = 0.05f;
  float momentum = 0.9f;  // SGD; 0: plain SGD
  float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;  // Adam
};

// Where the optimizer keeps what it updates (Recipe's weights, states and
// update; RecipeOptions' sr bits and seed).
struct WeightStorage {
  const Format* weights = nullptr;  // null: float32 master weights
  const Format* states = nullptr;   // null: float32 optimizer states
  WeightUpdate update = WeightUpdate::nearest;
  int sr_bits = 16;
  std::uint64_t sr_seed = 0;
};

// One parameter's updates in one step: elements whose update u was not
// zero, and of those the ones whose stored weight did not change (lost).
struct UpdateCounts {
  std::string name;
  std::uint64_t nonzero = 0, lost = 0;
};

// Each step computes, per element, an update u in float32:
// torch.optim.SGD (dampening 0, no weight decay): buf = g on the first
// step, then buf = buf·momentum + g; u = -(lr·buf).
// torch.optim.Adam (no weight decay, no amsgrad), step t from 1:
//   m = m + (1 - beta1)·(g - m)                  (torch's lerp, weight < 0.5)
//   v = v·beta2 + (1 - beta2)·(g·g)
//   denom = sqrt(v) / sqrt(1 - beta2^t) + eps
//   u = (-(lr / (1 - beta1^t)))·(m / denom)
// where 1 - beta^t, its square root and lr / (1 - beta1^t) are computed in
// double, as torch's Python scalars are, and rounded once to float32. A
// state in a low format is rounded to it (nearest even) once computed, and
// the update reads the stored value. The weight becomes p + u in float32,
// or under a low weight format that sum rounded to it (nearest even, or
// stochastically with the stream's next draws); Kahan keeps a compensation
// c in the weight format: y = u + c, p' = round(p + y), c = round((p - p') + y).
class Optimizer {
 public:
  Optimizer(OptimizerConfig config, std::span<Parameter* const> parameters, WeightStorage storage = {});
  std::vector<UpdateCounts> step();

 private:
  // The float32 update u of parameter k (its states advanced).
  std::vector<float> updates(std::size_t k, float step_size, float correction2_sqrt);
  void apply(std::size_t k, std::span<const float> u, UpdateCounts& counts);
  [[nodiscard]] bool kahan() const { return storage_.weights != nullptr && storage_.update == WeightUpdate::kahan; }

  OptimizerConfig config_;
  WeightStorage storage_;
  std::vector<Parameter*> parameters_;
  std::vector<std::vector<float>> first_, second_;  // momentum buffer / Adam's m; Adam's v
  std::vector<std::vector<float>> compensation_;    // Kahan's c
  std::uint64_t steps_ = 0;
  std::uint64_t draws_ = 0;  // stochastic rounding: the stream's next position
};

// x rounded to `f` (fp16 or bf16) to nearest even, in place: a tensor stored
// in a low format.
void store_as(const Format& f, std::span<float> x);

}  // namespace fmtcheck::train
