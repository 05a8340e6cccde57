// One tensor measured against several formats, as `fmtcheck analyze` and
// Python's fmtcheck.analyze report it: the measures of each format (counts,
// errors, amax, best power-of-two scale, MX block totals), the binade
// histogram of the input, and optionally every block. The tensor comes from
// a TensorFile (a file on disk, or memory_tensors()); its chunks are measured
// on `threads` threads and merged in chunk order, so the result does not
// depend on the threads.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fmtcheck/analysis/analysis.hpp"
#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/policy.hpp"
#include "fmtcheck/core/record.hpp"
#include "fmtcheck/io/tensor_io.hpp"

namespace fmtcheck {

// The per-tensor scale: none | auto (best power of two) | amax[:MARGIN]
// (fmt_max / amax / 2^MARGIN, Transformer Engine's) | pow2:N.
struct ScaleChoice {
  enum class Kind : std::uint8_t { none, automatic, amax, pow2 } kind = Kind::none;
  int n = 0;  // margin or exponent
};
// Throws std::invalid_argument in the CLI's words ("bad --scale 'x': ...").
ScaleChoice parse_scale_choice(std::string_view text);
// ocp | ceil | rne; throws std::invalid_argument ("bad --scale-rule 'x': ...").
BlockScaleRule parse_block_scale_rule(std::string_view text);

struct AnalysisSettings {
  std::vector<Format> formats;
  Policy policy;
  std::uint64_t seed = 0;          // stochastic rounding: element i draws RandomStream{seed}.draw(i)
  std::string scale = "none";      // parse_scale_choice's text
  int block = 0;                   // > 0: MX blocks of this many values share an E8M0 scale
  std::string scale_rule = "ocp";  // parse_block_scale_rule's text
  bool keep_blocks = false;        // fill FormatAnalysis::blocks
  unsigned threads = 0;            // 0: every core
};

// Checks the combination (a negative block, a block with a scale) and the
// words, throwing std::invalid_argument in the CLI's terms.
void check_settings(const AnalysisSettings& s);

// One tensor under one format: the measures in the order the CLI's CSV lists them.
struct FormatAnalysis {
  Format format;
  std::string scale;  // "1", "0.25", or "block32:ocp"
  std::vector<std::pair<std::string, double>> measures;
  std::vector<BlockResult> blocks;  // with keep_blocks
  ConversionStats stats;               // the counts behind the measures, at the scale used (all blocks with block)
  std::optional<int> best;             // best_pow2_exponent; nullopt when the tensor is all zero
  std::uint64_t underflow_at_best = 0;  // values that underflow to zero at 2^best
};

// The measures of a conversion, in the order the CLI's CSV lists them
// (values ... rms_rel_error, then the input's amax); a whole checkpoint's
// totals are the measures of its tensors' summed counters.
std::vector<std::pair<std::string, double>> measures_of(const ConversionStats& s, const InputSummary& in);

struct TensorAnalysis {
  InputSummary input;
  std::vector<FormatAnalysis> formats;
};

// Measures tensor `index` of `file`; `progressed(n)` is told of n more
// values read (twice the tensor's count in all), from any thread.
TensorAnalysis analyze_tensor(const TensorFile& file, std::size_t index, const AnalysisSettings& settings,
                              const std::function<void(std::uint64_t)>& progressed = {});

// One read of a tensor's values that measures what it is asked: the input
// summary, conversions with their errors, conversions' flags only, MX block
// conversions (results in the order asked). analyze_tensor reads a
// TensorFile's chunks on the CPU's threads; cuda/ reads a tensor in GPU
// memory (emulated_analysis.hpp). analyze_passes decides what each pass
// asks, so both measure the same things.
struct TensorPass {
  struct Request {
    bool summary = false;
    std::vector<const ScaledConversion*> measure;      // flags and errors
    std::vector<const ScaledConversion*> count_flags;  // flags only
    std::vector<const BlockScaledConversion*> blocks;
    bool keep_blocks = false;  // fill Result::block_results
  };
  struct Result {
    InputSummary summary;
    std::vector<ConversionStats> measured, counted;
    std::vector<BlockTotals> block_totals;
    std::vector<std::vector<BlockResult>> block_results;  // per BlockScaledConversion, in tensor order
  };
  std::function<Result(const Request&)> run;
  std::uint64_t count = 0;  // values in the tensor
  bool as_double = false;   // the values are float64 (TensorInfo::as_double)
};

// The measures of `settings` over one tensor, read by `pass` once, or twice
// when a scale depends on the tensor's amax (or the underflow at the best
// power of two needs a conversion).
TensorAnalysis analyze_passes(const TensorPass& pass, const AnalysisSettings& settings);

// One MX block (the `index`-th, starting at value `start`) as the columns of
// the CLI's --block-csv after file, tensor, format and scale_rule: block,
// start, amax, scale_log2, values, exact, inexact, overflow, saturated,
// underflow_to_zero, subnormal, max_abs_error, max_rel_error.
Record block_record(const BlockResult& b, std::uint64_t index, std::uint64_t start);

// The histogram's rows: every binade that occurs (floor(log2 |x|) of the
// nonzero finite values), then "zero", "infinite" and "not_a_number"
// (either sign), always. Not "nan": pandas would read that as a missing value.
std::vector<std::pair<std::string, std::uint64_t>> histogram_rows(const InputSummary& in);

}  // namespace fmtcheck
