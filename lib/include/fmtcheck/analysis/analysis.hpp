// What a format does to a whole tensor: counts of each outcome, errors,
// the binade histogram, and the power-of-two scale that fits the tensor.
// Values arrive in chunks (see tensor_io.hpp) that may be measured on
// several threads at once: the measuring objects are immutable, each call
// adds to the caller's counters, and counters merge with +=.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "fmtcheck/core/flags.hpp"
#include "fmtcheck/core/format.hpp"
#include "fmtcheck/analysis/value_measures.hpp"  // BlockScaleRule
#include "fmtcheck/core/policy.hpp"

namespace fmtcheck {

// One pass over the input before any conversion.
struct InputSummary {
  // Binades of nonzero finite float64 values: 2^-1074 (smallest subnormal) .. 2^1023.
  static constexpr int min_binade = -1074;
  static constexpr int max_binade = 1023;

  std::uint64_t values = 0;
  std::uint64_t nan = 0;
  std::uint64_t inf = 0;
  std::uint64_t zero = 0;
  double amax = 0;  // largest finite |x|
  // binade_count[b - min_binade]: how many nonzero finite x have floor(log2 |x|) == b;
  // power_of_two_count[b - min_binade]: how many of them are exactly +-2^b.
  std::vector<std::uint64_t> binade_count = std::vector<std::uint64_t>(max_binade - min_binade + 1);
  std::vector<std::uint64_t> power_of_two_count = std::vector<std::uint64_t>(max_binade - min_binade + 1);

  void add(std::span<const float> x);
  void add(std::span<const double> x);
  InputSummary& operator+=(const InputSummary& o);
  // The binades that occur -> how many values each.
  [[nodiscard]] std::map<int, std::uint64_t> binades() const;
  // How many nonzero finite x have |x| <= 2^e.
  [[nodiscard]] std::uint64_t at_most_power_of_two(int e) const;
};

// How many values underflow to zero when the tensor is scaled by 2^k and
// converted to `f`, read off the input summary instead of converting again,
// where that is exact: round-to-nearest-even with subnormals kept, so that
// nonzero x goes to zero exactly when |x * 2^k| <= half the smallest
// subnormal (the tie goes to the even zero), and a product that underflows
// in the input's own precision (float32, or float64 when `float64_input`:
// the tensor arrives as double, see TensorInfo::as_double)
// is zero before the conversion and not counted. nullopt where the summary
// cannot say (other policies; a negative k with a threshold inside float32's
// subnormal range, where the product itself rounds).
std::optional<std::uint64_t> underflow_at_pow2_scale(const InputSummary& in, const Format& f, const Policy& p, int k,
                                                     bool float64_input);

// The largest power of two 2^k with amax * 2^k <= the format's max finite:
// scaling by it never overflows and underflows the fewest values. k is
// clamped to [-126, 127] so the scale is a normal float32. nullopt when amax
// is 0 (any scale fits).
std::optional<int> best_pow2_exponent(double amax, const Format& f);

// The outcome of converting x * scale to a format, counted over a tensor.
struct ConversionStats {
  std::uint64_t values = 0;
  std::uint64_t exact = 0;              // dequantized result == x
  std::uint64_t inexact = 0;            // core flag: the result differs from x * scale
  std::uint64_t overflow = 0;           // finite x, infinite or NaN result
  std::uint64_t saturated = 0;          // core flag: clamped to +-max (overflow or inf input)
  std::uint64_t underflow_to_zero = 0;  // core flag tiny_to_zero: nonzero x, zero result
  std::uint64_t subnormal = 0;          // core flag: result is subnormal
  std::uint64_t flushed = 0;            // core flag: ftz/daz replaced a value by zero
  std::uint64_t nan_in = 0;
  std::uint64_t inf_in = 0;
  std::uint64_t nan_produced = 0;       // core flag: NaN result from a non-NaN input
  std::uint64_t nonfinite_out = 0;      // results that are inf or NaN, whatever the input
  // Errors of the dequantized result r / scale against x, over finite x with
  // finite r; relative errors over those with x != 0.
  std::uint64_t error_count = 0;
  std::uint64_t rel_error_count = 0;
  double max_abs_error = 0;
  double max_rel_error = 0;
  double sum_rel_error = 0;
  double sum_sq_rel_error = 0;

  [[nodiscard]] double mean_rel_error() const;
  [[nodiscard]] double rms_rel_error() const;
  ConversionStats& operator+=(const ConversionStats& o);
  // What a conversion's flag counts and its values' errors add (value_measures.hpp).
  void add(const FlagCounts& flags);
  void add(const ValueErrors& errors);
};

// Converts x * scale to `format` and measures the outcome. float32 input is
// scaled in float32, as the GPU kernels of torch and Transformer Engine do
// before their cast; float64 input is scaled and converted as float64, so a
// float64 tensor is measured exactly. A power-of-two scale makes the product
// exact. With stochastic rounding, element i of the tensor draws
// RandomStream{seed}.draw(i). Immutable: safe to share between threads.
class ScaledConversion {
 public:
  ScaledConversion(Format format, Policy policy, float scale, std::uint64_t seed = 0);
  // Adds the outcome of values [first, first + x.size()) of the tensor to `stats`.
  void measure(std::span<const float> x, std::uint64_t first, ConversionStats& stats) const;
  void measure(std::span<const double> x, std::uint64_t first, ConversionStats& stats) const;
  // Only the flag counts (values, inexact, saturated, underflow_to_zero,
  // subnormal, flushed, nan_produced), without the per-value errors: cheaper.
  void count_flags(std::span<const float> x, std::uint64_t first, ConversionStats& stats) const;
  void count_flags(std::span<const double> x, std::uint64_t first, ConversionStats& stats) const;
  [[nodiscard]] float scale() const { return scale_; }
  [[nodiscard]] const Format& format() const { return format_; }
  [[nodiscard]] const Policy& policy() const { return policy_; }
  [[nodiscard]] std::uint64_t seed() const { return seed_; }

 private:
  template <typename T>
  void run(std::span<const T> x, std::uint64_t first, ConversionStats& stats, bool errors) const;
  Format format_;
  Policy policy_;
  float scale_;
  std::uint64_t seed_;
  std::shared_ptr<const std::vector<double>> decoded_;  // code -> value, formats of at most 16 bits
};

// The block's scale exponent k (scale = 2^k), chosen by rounding to E8M0
// through the library core; amax 0 (or no finite value) gives k = 0.
int block_scale_exponent(double amax, const Format& element, BlockScaleRule rule);

// One MX block: its amax (over finite values), scale 2^scale_log2 and outcome.
struct BlockResult {
  double amax = 0;
  int scale_log2 = 0;
  ConversionStats stats;
};

// A tensor's blocks summed: the outcome over all elements and the range of scales.
struct BlockTotals {
  ConversionStats stats;
  std::uint64_t blocks = 0;
  int min_scale_log2 = 0;
  int max_scale_log2 = 0;
  void add(const BlockResult& b);
  BlockTotals& operator+=(const BlockTotals& o);
};

// MX-style conversion: consecutive blocks of `block` values share a scale
// 2^k; each element is converted as x * 2^-k and dequantized as r * 2^k.
// Immutable: safe to share between threads.
class BlockScaledConversion {
 public:
  BlockScaledConversion(Format element, Policy policy, int block, BlockScaleRule rule);
  // Measures values [first, first + x.size()) of the tensor; `first` must
  // start a block and x must hold whole blocks except at the tensor's end.
  // Adds to `totals`, and appends each block to `blocks` when given.
  void measure(std::span<const float> x, std::uint64_t first, BlockTotals& totals, std::vector<BlockResult>* blocks) const;
  void measure(std::span<const double> x, std::uint64_t first, BlockTotals& totals, std::vector<BlockResult>* blocks) const;
  [[nodiscard]] int block() const { return block_; }
  [[nodiscard]] const Format& element() const { return element_; }
  [[nodiscard]] const Policy& policy() const { return policy_; }
  [[nodiscard]] BlockScaleRule rule() const { return rule_; }

 private:
  template <typename T>
  void run(std::span<const T> x, std::uint64_t first, BlockTotals& totals, std::vector<BlockResult>* blocks) const;
  Format element_;
  Policy policy_;
  int block_;
  BlockScaleRule rule_;
  std::shared_ptr<const std::vector<double>> decoded_;  // code -> value, formats of at most 16 bits
};

}  // namespace fmtcheck
