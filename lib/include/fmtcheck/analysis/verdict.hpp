// The closing verdict of `fmtcheck analyze` (and of Python's Analysis and
// fmtcheck.torch's Recorder), one paragraph per format: what overflows or
// underflows to zero, and the power-of-two scale that fixes it (or why none
// does). The main job ends with it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fmtcheck/analysis/analysis.hpp"
#include "fmtcheck/core/format.hpp"

namespace fmtcheck {

// One tensor converted to one format.
struct TensorOutcome {
  std::string format;
  ConversionStats stats;            // at the scale the run used
  bool block_scaled = false;        // --block: every block had its own scale
  std::optional<int> best;          // best_pow2_exponent; nullopt when the tensor is all zero
  std::uint64_t underflow_at_best = 0;  // values that underflow to zero at 2^best
};

// "fp16   fits: ..." per format, in the order of `formats`, wrapped to
// `width` columns. `scale` names the scale the run used ("1", "auto"...).
std::string verdict(const std::vector<TensorOutcome>& outcomes, const std::vector<Format>& formats,
                    const std::string& scale, std::size_t width);

// The scale a run applied, as the verdict names it: "1" for none, the
// --scale text ("auto", "amax:1", "pow2:-3"), or "block32:ocp" with blocks.
std::string applied_scale(const std::string& scale, int block, const std::string& scale_rule);

}  // namespace fmtcheck
