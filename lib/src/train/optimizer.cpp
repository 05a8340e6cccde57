#include "fmtcheck/train/optimizer.hpp"

#include <cmath>
#include <stdexcept>

#include "fmtcheck/batch/convert_batch.hpp"
#include "fmtcheck/core/decode.hpp"

namespace fmtcheck::train {
namespace {

// x rounded to the 16-bit format `f` under `policy` (with the stream's draws
// when stochastic), as float32 values.
void round_in_place(const Format& f, Policy policy, std::span<float> x, RandomStream draws = {}) {
  if (f.storage_bits != 16) throw std::invalid_argument("weights and optimizer states are stored in fp16 or bf16 only");
  std::vector<std::uint16_t> bits(x.size());
  if (is_stochastic(policy.rounding)) {
    convert_batch(x, f, policy, std::span<std::uint16_t>(bits), draws);
  } else {
    convert_batch(x, f, policy, std::span<std::uint16_t>(bits));
  }
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(to_double(f, bits[i]));
}

}  // namespace

void store_as(const Format& f, std::span<float> x) { round_in_place(f, activation_policy(), x); }

Optimizer::Optimizer(OptimizerConfig config, std::span<Parameter* const> parameters, WeightStorage storage)
    : config_(config), storage_(storage), parameters_(parameters.begin(), parameters.end()) {
  if (storage_.update == WeightUpdate::stochastic && (storage_.sr_bits < 1 || storage_.sr_bits > 32)) {
    throw std::invalid_argument("stochastic rounding takes 1 to 32 random bits");
  }
  for (const Parameter* p : parameters_) {
    first_.emplace_back(p->value.size(), 0.0f);
    second_.emplace_back(p->value.size(), 0.0f);
    compensation_.emplace_back(kahan() ? p->value.size() : 0, 0.0f);
  }
}

std::vector<float> Optimizer::updates(std::size_t k, float step_size, float correction2_sqrt) {
  const std::vector<float>& g = parameters_[k]->grad;
  std::vector<float>& m = first_[k];
  std::vector<float>& v = second_[k];
  std::vector<float> u(g.size());
  if (config_.kind == OptimizerConfig::Kind::sgd) {
    for (std::size_t i = 0; i < g.size(); ++i) {
      m[i] = steps_ == 1 || config_.momentum == 0.0f ? g[i] : m[i] * config_.momentum + g[i];
    }
    if (storage_.states != nullptr) store_as(*storage_.states, m);
    for (std::size_t i = 0; i < g.size(); ++i) u[i] = -(config_.lr * m[i]);
    return u;
  }
  const float one_minus_beta1 = 1.0f - config_.beta1, one_minus_beta2 = 1.0f - config_.beta2;
  for (std::size_t i = 0; i < g.size(); ++i) {
    m[i] = m[i] + one_minus_beta1 * (g[i] - m[i]);
    v[i] = v[i] * config_.beta2 + one_minus_beta2 * (g[i] * g[i]);
  }
  if (storage_.states != nullptr) {
    store_as(*storage_.states, m);
    store_as(*storage_.states, v);
  }
  for (std::size_t i = 0; i < g.size(); ++i) {
    const float denom = std::sqrt(v[i]) / correction2_sqrt + config_.eps;
    u[i] = (-step_size) * (m[i] / denom);
  }
  return u;
}

void Optimizer::apply(std::size_t k, std::span<const float> u, UpdateCounts& counts) {
  std::vector<float>& p = parameters_[k]->value;
  std::vector<float>& c = compensation_[k];
  const std::vector<float> before = p;
  std::vector<float> y(u.begin(), u.end());
  if (kahan()) {
    for (std::size_t i = 0; i < p.size(); ++i) y[i] = u[i] + c[i];
  }
  for (std::size_t i = 0; i < p.size(); ++i) p[i] = p[i] + y[i];
  if (storage_.weights != nullptr) {
    Policy policy = activation_policy();
    RandomStream draws{storage_.sr_seed, draws_};
    if (storage_.update == WeightUpdate::stochastic) {
      policy.rounding = Rounding::sr;
      policy.random_bit_count = storage_.sr_bits;
      draws_ += p.size();
    }
    round_in_place(*storage_.weights, policy, p, draws);
  }
  if (kahan()) {
    for (std::size_t i = 0; i < p.size(); ++i) c[i] = (before[i] - p[i]) + y[i];
    store_as(*storage_.weights, c);
  }
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (u[i] == 0.0f) continue;
    ++counts.nonzero;
    counts.lost += p[i] == before[i] ? 1 : 0;
  }
}

std::vector<UpdateCounts> Optimizer::step() {
  ++steps_;
  const auto t = static_cast<double>(steps_);
  const double correction1 = 1.0 - std::pow(static_cast<double>(config_.beta1), t);
  const double correction2 = 1.0 - std::pow(static_cast<double>(config_.beta2), t);
  const auto step_size = static_cast<float>(static_cast<double>(config_.lr) / correction1);
  const auto correction2_sqrt = static_cast<float>(std::sqrt(correction2));
  std::vector<UpdateCounts> counts;
  for (std::size_t k = 0; k < parameters_.size(); ++k) {
    counts.push_back({parameters_[k]->name, 0, 0});
    apply(k, updates(k, step_size, correction2_sqrt), counts.back());
  }
  return counts;
}

}  // namespace fmtcheck::train
