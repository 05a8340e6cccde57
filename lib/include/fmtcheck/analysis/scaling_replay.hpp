// A training run's gradients replayed through a scaling recipe, step by
// step, as `fmtcheck scale` and Python's fmtcheck.replay_scaling do: the
// recipe decides each tensor's scale (scaling.hpp), every scaled gradient is
// converted bit-exactly (ScaledConversion), and the loss scalers learn
// from the step whether any gradient became inf or NaN.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "fmtcheck/analysis/analysis.hpp"
#include "fmtcheck/analysis/scaling.hpp"
#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/policy_text.hpp"
#include "fmtcheck/core/record.hpp"
#include "fmtcheck/io/tensor_io.hpp"

namespace fmtcheck {

// The recipe and its knobs as words and numbers, as the CLI's options give them.
struct ReplaySettings {
  std::string recipe = "gradscaler";  // gradscaler, deepspeed, delayed, current
  std::string format;                 // default: fp16 for the loss scalers, hybrid for the FP8 recipes
  std::string forward;                // hybrid: regex of the forward-pass tensors (e4m3); the rest are e5m2
  PolicyText policy;
  bool overflow_given = false;  // otherwise nosat for the loss scalers (torch's fp16 overflows to inf), sat for FP8 (TE)
  GradScalerConfig scaler;
  DeepSpeedScalerConfig deepspeed;    // its init_scale, hysteresis and min_scale come from `scaler` when given
  bool hysteresis_given = false, min_scale_given = false;
  int history = 1024;
  std::string amax_compute = "max";  // max, most_recent
  int margin = 0;
};

// One tensor of one step.
struct ReplayRow {
  std::uint64_t step = 0;
  std::string tensor;
  std::string format;
  float scale = 1.0f;
  bool skipped = false;
  ConversionStats stats;
  double amax = 0;  // of the unscaled tensor; NaN or inf when it held one
};

// A row as the columns of `fmtcheck scale --csv`: step, tensor, format,
// scale, skipped, values, overflow, overflow_fraction, saturated,
// underflow_to_zero, underflow_fraction, flushed, subnormal, amax.
Record replay_row_record(const ReplayRow& r);

// A run's totals per tensor and over the trace.
struct ReplaySummary {
  struct Tensor {
    std::string format;
    ConversionStats stats;
    float min_scale = 0, max_scale = 0;
  };
  std::map<std::string, Tensor> tensors;
  std::uint64_t steps = 0, skipped = 0;
};

class ScalingReplay {
 public:
  // Validates the settings; throws std::invalid_argument in the CLI's words.
  explicit ScalingReplay(const ReplaySettings& settings);

  // A tensor of a step: `name` identifies it across steps (the delayed
  // recipe keeps a history per name).
  struct StepTensor {
    std::string name;
    const TensorFile* file;
    std::size_t index;
  };
  // Replays one step; throws std::invalid_argument when it has no tensors.
  void step(std::uint64_t step, const std::vector<StepTensor>& tensors);

  [[nodiscard]] const std::vector<ReplayRow>& rows() const { return rows_; }
  [[nodiscard]] ReplaySummary summarize() const;
  [[nodiscard]] const std::string& recipe() const { return settings_.recipe; }
  // "hybrid" or the gradient format's name.
  [[nodiscard]] std::string format_name() const { return hybrid_ ? "hybrid" : gradient_format_.name; }
  [[nodiscard]] const Policy& policy() const { return policy_; }
  // "recipe gradscaler, fp16 (rne,nosat,keep,after,ieee)".
  [[nodiscard]] std::string describe() const;
  // DeepSpeed: overflows at the minimum scale, where DeepSpeed stops the run.
  [[nodiscard]] std::optional<std::uint64_t> overflows_at_min_scale() const;
  // The run's totals as `fmtcheck scale --json` names them: recipe, format,
  // policy, steps, skipped_steps, final_scale (overflows_at_min_scale for
  // DeepSpeed); and one record per tensor (tensor, format, values, overflow,
  // saturated, underflow_to_zero, underflow_fraction, flushed, subnormal,
  // min_scale, max_scale).
  [[nodiscard]] Record summary_record() const;
  [[nodiscard]] std::vector<Record> tensor_records() const;

 private:
  ReplaySettings settings_;
  bool fp8_ = false, hybrid_ = false;
  Format gradient_format_, forward_format_;
  std::optional<std::regex> forward_;
  Policy policy_;
  std::unique_ptr<GradScaler> gradscaler_;
  std::unique_ptr<DeepSpeedLossScaler> deepspeed_;
  LossScaler* scaler_ = nullptr;  // the loss-scaling recipes; null for the FP8 ones
  std::map<std::string, DelayedScaling> delayed_;
  std::vector<ReplayRow> rows_;
  unsigned threads_;  // every core
};

}  // namespace fmtcheck
