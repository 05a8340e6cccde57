#include "fmtcheck/train/optimizer.hpp"

#include <cmath>

namespace fmtcheck::train {

Optimizer::Optimizer(OptimizerConfig config, std::span<Parameter* const> parameters)
    : config_(config), parameters_(parameters.begin(), parameters.end()) {
  for (const Parameter* p : parameters_) {
    first_.emplace_back(p->value.size(), 0.0f);
    second_.emplace_back(p->value.size(), 0.0f);
  }
}

void Optimizer::step() {
  ++steps_;
  const auto t = static_cast<double>(steps_);
  const double correction1 = 1.0 - std::pow(static_cast<double>(config_.beta1), t);
  const double correction2 = 1.0 - std::pow(static_cast<double>(config_.beta2), t);
  const auto step_size = static_cast<float>(static_cast<double>(config_.lr) / correction1);
  const auto correction2_sqrt = static_cast<float>(std::sqrt(correction2));
  const float one_minus_beta1 = 1.0f - config_.beta1, one_minus_beta2 = 1.0f - config_.beta2;
  for (std::size_t k = 0; k < parameters_.size(); ++k) {
    std::vector<float>& p = parameters_[k]->value;
    const std::vector<float>& g = parameters_[k]->grad;
    std::vector<float>& m = first_[k];
    std::vector<float>& v = second_[k];
    for (std::size_t i = 0; i < p.size(); ++i) {
      if (config_.kind == OptimizerConfig::Kind::sgd) {
        m[i] = steps_ == 1 || config_.momentum == 0.0f ? g[i] : m[i] * config_.momentum + g[i];
        p[i] = p[i] - config_.lr * m[i];
      } else {
        m[i] = m[i] + one_minus_beta1 * (g[i] - m[i]);
        v[i] = v[i] * config_.beta2 + one_minus_beta2 * (g[i] * g[i]);
        const float denom = std::sqrt(v[i]) / correction2_sqrt + config_.eps;
        p[i] = p[i] + (-step_size) * (m[i] / denom);
      }
    }
  }
}

}  // namespace fmtcheck::train
