// Scaling recipes of mixed-precision training, as state machines that a
// replay drives step by step: torch's GradScaler (with the hysteresis and
// minimum scale of Megatron-LM), DeepSpeed's DynamicLossScaler, and
// Transformer Engine's delayed and current FP8 scaling. They decide scales; the conversions
// themselves go through analysis.hpp's ScaledConversion.
#pragma once

#include <cstdint>
#include <deque>

namespace fmtcheck {

// A dynamic loss scaler as a replay drives it: the gradients of a step are
// scaled by scale(), then update() learns whether any became inf or NaN.
class LossScaler {
 public:
  virtual ~LossScaler() = default;
  [[nodiscard]] virtual double scale() const = 0;
  // Applies the outcome of the step just taken at scale(); returns true when
  // the step is skipped (found_inf).
  virtual bool update(bool found_inf) = 0;
};

struct GradScalerConfig {
  double init_scale = 65536.0;  // torch.cuda.amp.GradScaler defaults
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int growth_interval = 2000;
  // Megatron-LM DynamicGradScaler (megatron/core/optimizer/grad_scaler.py) additions:
  int hysteresis = 1;           // overflowing steps tolerated before backing off (1 = torch)
  double min_scale = 0.0;       // the scale never backs off below this (0 = torch: no floor)
};

// torch.amp.GradScaler.update() semantics (torch/amp/grad_scaler.py and the
// _amp_update_scale_ kernel): on a step with any inf/NaN gradient the
// optimizer step is skipped, the growth counter resets and the scale is
// multiplied by backoff_factor (once `hysteresis` such steps have accumulated,
// never below min_scale); after growth_interval consecutive finite steps it
// is multiplied by growth_factor and the hysteresis budget is restored.
class GradScaler final : public LossScaler {
 public:
  explicit GradScaler(GradScalerConfig config = {});
  [[nodiscard]] double scale() const override { return scale_; }
  bool update(bool found_inf) override;

 private:
  GradScalerConfig config_;
  double scale_;
  int growth_tracker_ = 0;
  int hysteresis_left_;
};

// DeepSpeed's fp16 configuration defaults (deepspeed/runtime/constants.py:
// initial_scale_power 16, loss_scale_window 1000, hysteresis 2,
// min_loss_scale 1, consecutive_hysteresis false).
struct DeepSpeedScalerConfig {
  double init_scale = 65536.0;
  int scale_window = 1000;
  double min_scale = 1.0;
  int hysteresis = 2;  // DynamicLossScaler's delayed_shift
  bool consecutive_hysteresis = false;
};

// DeepSpeed's DynamicLossScaler.update_scale, rule for rule
// (deepspeed/runtime/fp16/loss_scaler.py). The scale factor is 2. On an
// overflow: if the hysteresis budget is down to 1 (or delayed_shift is 1)
// the scale halves, never below min_scale, and the budget stays at 1;
// otherwise the budget drops by one. The overflow's iteration is
// remembered. On a finite step: consecutive_hysteresis restores the budget;
// then, with stable = iterations since the last overflow minus one, the
// scale doubles when stable > 0 and stable % scale_window == 0 (restoring
// the budget without consecutive_hysteresis). So growth comes on the
// (scale_window + 1)-th consecutive finite step (counted from the start or
// from the last overflow; torch grows on the scale_window-th), then every
// scale_window steps. Where DeepSpeed raises ("Current loss scale already
// at minimum", raise_error_at_min_scale) the replay keeps min_scale and
// counts the step in overflows_at_min_scale().
class DeepSpeedLossScaler final : public LossScaler {
 public:
  explicit DeepSpeedLossScaler(DeepSpeedScalerConfig config = {});
  [[nodiscard]] double scale() const override { return scale_; }
  bool update(bool overflow) override;
  [[nodiscard]] std::uint64_t overflows_at_min_scale() const { return at_min_; }

 private:
  DeepSpeedScalerConfig config_;
  double scale_;
  std::int64_t iteration_ = 0;
  std::int64_t last_overflow_ = -1;
  int hysteresis_left_;
  std::uint64_t at_min_ = 0;
};

enum class AmaxCompute : std::uint8_t { max, most_recent };

// Transformer Engine's FP8 scale from an amax, in float32 as TE computes it:
// (fp8_max / amax) / 2^margin; an amax that is 0, inf or NaN keeps
// `previous`, and a scale that overflows float32 becomes FLT_MAX.
float fp8_scale_from_amax(float amax, float fp8_max, int margin, float previous);

// transformer_engine.common.recipe.DelayedScaling for one tensor: the scale
// of step t comes from the amaxes of the `history_length` steps before it
// (their max, or the latest); the first step, with an empty history, uses 1.
class DelayedScaling {
 public:
  DelayedScaling(float fp8_max, int history_length = 1024, AmaxCompute compute = AmaxCompute::max, int margin = 0);
  [[nodiscard]] float scale() const { return scale_; }
  // Records the amax of the step just converted at scale() and computes the next scale.
  void update(float amax);

 private:
  float fp8_max_;
  std::size_t history_length_;
  AmaxCompute compute_;
  int margin_;
  float scale_ = 1.0f;
  std::deque<float> history_;  // newest last
};

}  // namespace fmtcheck
