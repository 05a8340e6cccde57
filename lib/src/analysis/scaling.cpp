#include "fmtcheck/analysis/scaling.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace fmtcheck {

GradScaler::GradScaler(GradScalerConfig config)
    : config_(config), scale_(config.init_scale), hysteresis_left_(config.hysteresis) {
  if (config.growth_interval < 1) throw std::invalid_argument("GradScaler: growth_interval must be at least 1");
  if (config.hysteresis < 1) throw std::invalid_argument("GradScaler: hysteresis must be at least 1");
}

bool GradScaler::update(bool found_inf) {
  if (found_inf) {
    growth_tracker_ = 0;
    if (--hysteresis_left_ <= 0) scale_ = std::max(scale_ * config_.backoff_factor, config_.min_scale);
    return true;
  }
  if (++growth_tracker_ == config_.growth_interval) {
    growth_tracker_ = 0;
    hysteresis_left_ = config_.hysteresis;
    scale_ *= config_.growth_factor;
  }
  return false;
}

DeepSpeedLossScaler::DeepSpeedLossScaler(DeepSpeedScalerConfig config)
    : config_(config), scale_(config.init_scale), hysteresis_left_(config.hysteresis) {
  if (config.scale_window < 1) throw std::invalid_argument("DeepSpeedLossScaler: scale_window must be at least 1");
  if (config.hysteresis < 1) throw std::invalid_argument("DeepSpeedLossScaler: hysteresis must be at least 1");
}

bool DeepSpeedLossScaler::update(bool overflow) {
  constexpr double scale_factor = 2.0;  // fixed in DynamicLossScaler.__init__
  if (overflow) {
    if (config_.hysteresis == 1 || hysteresis_left_ == 1) {
      if (scale_ == config_.min_scale) ++at_min_;
      scale_ = std::max(scale_ / scale_factor, config_.min_scale);
    } else {
      --hysteresis_left_;
    }
    last_overflow_ = iteration_;
  } else {
    if (config_.consecutive_hysteresis) hysteresis_left_ = config_.hysteresis;
    const std::int64_t stable = iteration_ - last_overflow_ - 1;
    if (stable > 0 && stable % config_.scale_window == 0) {
      if (!config_.consecutive_hysteresis) hysteresis_left_ = config_.hysteresis;
      scale_ *= scale_factor;
    }
  }
  ++iteration_;
  return overflow;
}

float fp8_scale_from_amax(float amax, float fp8_max, int margin, float previous) {
  if (!(amax > 0) || !std::isfinite(amax)) return previous;
  const float scale = (fp8_max / amax) / std::ldexp(1.0f, margin);
  return std::isinf(scale) ? std::numeric_limits<float>::max() : scale;
}

DelayedScaling::DelayedScaling(float fp8_max, int history_length, AmaxCompute compute, int margin)
    : fp8_max_(fp8_max), history_length_(static_cast<std::size_t>(history_length)), compute_(compute), margin_(margin) {
  if (history_length < 1) throw std::invalid_argument("DelayedScaling: history length must be at least 1");
}

void DelayedScaling::update(float amax) {
  history_.push_back(amax);
  if (history_.size() > history_length_) history_.pop_front();
  // torch.max over the window: a NaN anywhere makes the window's amax NaN.
  float window = history_.back();
  if (compute_ == AmaxCompute::max) {
    for (const float a : history_) window = std::isnan(a) || std::isnan(window) ? NAN : std::max(window, a);
  }
  scale_ = fp8_scale_from_amax(window, fp8_max_, margin_, scale_);
}

}  // namespace fmtcheck
