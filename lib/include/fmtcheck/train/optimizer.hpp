// Optimizers on float32 master weights, with torch's update rules written as
// one float32 operation per step of the formula, in the order below.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "fmtcheck/train/layers.hpp"

namespace fmtcheck::train {

struct OptimizerConfig {
  enum class Kind : std::uint8_t { sgd, adam } kind = Kind::sgd;
  float lr = 0.05f;
  float momentum = 0.9f;  // SGD; 0: plain SGD
  float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;  // Adam
};

// torch.optim.SGD (dampening 0, no weight decay): buf = g on the first
// step, then buf = buf·momentum + g; p = p - lr·buf.
// torch.optim.Adam (no weight decay, no amsgrad), step t from 1:
//   m = m + (1 - beta1)·(g - m)                  (torch's lerp, weight < 0.5)
//   v = v·beta2 + (1 - beta2)·(g·g)
//   denom = sqrt(v) / sqrt(1 - beta2^t) + eps
//   p = p + (-(lr / (1 - beta1^t)))·(m / denom)
// where 1 - beta^t, its square root and lr / (1 - beta1^t) are computed in
// double, as torch's Python scalars are, and rounded once to float32.
class Optimizer {
 public:
  Optimizer(OptimizerConfig config, std::span<Parameter* const> parameters);
  void step();

 private:
  OptimizerConfig config_;
  std::vector<Parameter*> parameters_;
  std::vector<std::vector<float>> first_, second_;  // momentum buffer / Adam's m; Adam's v
  std::uint64_t steps_ = 0;
};

}  // namespace fmtcheck::train
