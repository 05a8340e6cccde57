// Scaling recipes of mixed-precision training, as state machines that a
// replay drives step by step: torch's GradScaler (with the hysteresis and
// minimum scale of Megatron-LM and DeepSpeed) and Transformer Engine's
// delayed and current FP8 scaling. They decide scales; the conversions
// themselves go through analysis.hpp's ScaledConversion.
#pragma once

#include <cstdint>
#include <deque>

namespace fmtcheck {

struct GradScalerConfig {
  double init_scale = 65536.0;  // torch.cuda.amp.GradScaler defaults
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int growth_interval = 2000;
  // Megatron-LM DynamicGradScaler / DeepSpeed DynamicLossScaler additions:
  int hysteresis = 1;           // overflowing steps tolerated before backing off (1 = torch)
  double min_scale = 0.0;       // the scale never backs off below this (0 = torch: no floor)
  bool consecutive_hysteresis = false;  // DeepSpeed: a finite step restores the hysteresis budget
};

// torch.amp.GradScaler.update() semantics (torch/amp/grad_scaler.py and the
// _amp_update_scale_ kernel): on a step with any inf/NaN gradient the
// optimizer step is skipped, the growth counter resets and the scale is
// multiplied by backoff_factor (once `hysteresis` such steps have accumulated,
// never below min_scale); after growth_interval consecutive finite steps it
// is multiplied by growth_factor and the hysteresis budget is restored.
class GradScaler {
 public:
  explicit GradScaler(GradScalerConfig config = {});
  [[nodiscard]] double scale() const { return scale_; }
  // Applies the outcome of the step just taken at scale(); returns true when
  // the step is skipped (found_inf).
  bool update(bool found_inf);

 private:
  GradScalerConfig config_;
  double scale_;
  int growth_tracker_ = 0;
  int hysteresis_left_;
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
