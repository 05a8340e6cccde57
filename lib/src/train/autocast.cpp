#include "fmtcheck/train/autocast.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "fmtcheck/core/decode.hpp"
#include "fmtcheck/train/exact_math.hpp"

namespace fmtcheck::train {
namespace {

float max_finite(const Format& f) { return static_cast<float>(to_double(f, f.to_storage(f.max_finite_code()))); }

}  // namespace

Quantized Quantized::transposed() const {
  return {format, transpose<std::uint32_t>(bits, rows, cols), scale_inv, cols, rows};
}

float amax_of(std::span<const float> x) {
  float m = 0.0f;
  for (const float v : x) {
    if (std::isnan(v)) return v;
    m = std::max(m, std::abs(v));
  }
  return m;
}

std::vector<float> decode(const Format& f, std::span<const std::uint32_t> bits) {
  std::vector<float> out(bits.size());
  for (std::size_t i = 0; i < bits.size(); ++i) out[i] = static_cast<float>(to_double(f, bits[i]));
  return out;
}

Autocast::Autocast(const Recipe& recipe, const RecipeOptions& options, TensorOps& ops)
    : recipe_(recipe), options_(options), ops_(ops) {}

TensorStats& Autocast::record(const std::string& name) {
  for (auto& [n, s] : step_) {
    if (n == name) throw std::logic_error("tensor '" + name + "' recorded twice in one step");
  }
  return step_.emplace_back(name, TensorStats{}).second;
}

float Autocast::scale_for(const std::string& name, const Format& format, float amax) {
  switch (recipe_.scaling) {
    case TensorScaling::none: return 1.0f;
    case TensorScaling::current: return fp8_scale_from_amax(amax, max_finite(format), options_.margin, 1.0f);
    case TensorScaling::delayed: {
      auto it = delayed_.try_emplace(name, max_finite(format), options_.amax_history, options_.amax_compute,
                                     options_.margin).first;
      const float scale = it->second.scale();
      it->second.update(amax);  // the amax of this step's cast, for the scales of the steps after it
      return scale;
    }
  }
  return 1.0f;
}

Quantized Autocast::operand(const std::string& name, Role role, std::span<const float> x, std::size_t rows,
                            std::size_t cols) {
  const Format& f = role == Role::forward ? *recipe_.forward : *recipe_.gradient;
  TensorStats& s = record(name);
  s.amax = amax_of(x);
  s.scale = scale_for(name, f, s.amax);
  Quantized q{&f, {}, 1.0f, rows, cols};
  if (s.scale == 1.0f) {
    q.bits = ops_.cast(f, recipe_.operand_policy, x, s.flags);
  } else {
    std::vector<float> scaled(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) scaled[i] = x[i] * s.scale;
    q.bits = ops_.cast(f, recipe_.operand_policy, scaled, s.flags);
    q.scale_inv = 1.0f / s.scale;  // Transformer Engine's scale_inv
  }
  return q;
}

std::vector<float> Autocast::gemm(const Quantized& a, const Quantized& b) {
  if (a.cols != b.cols) throw std::logic_error("gemm: inner dimensions differ");
  return ops_.gemm(a.operand(), b.operand(), a.rows, b.rows, a.cols);
}

std::vector<float> Autocast::to_activation(const std::string& name, std::vector<float> x) {
  if (recipe_.activation == nullptr) return x;
  FlagCounts ignored;
  FlagCounts& counts = name.empty() ? ignored : record(name).flags;
  if (!name.empty()) step_.back().second.amax = amax_of(x);
  return decode(*recipe_.activation, ops_.cast(*recipe_.activation, activation_policy(), x, counts));
}

}  // namespace fmtcheck::train
