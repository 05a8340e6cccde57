// What a format does to a whole tensor: counts of each outcome, errors,
// the binade histogram, and the power-of-two scale that fits the tensor.
// Values arrive in chunks (see tensor_io.hpp), so tensors of any size are
// measured in bounded memory.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <vector>

#include "fmtcheck/format.hpp"
#include "fmtcheck/policy.hpp"

namespace fmtcheck {

// One pass over the input before any conversion.
struct InputSummary {
  std::uint64_t values = 0;
  std::uint64_t nan = 0;
  std::uint64_t inf = 0;
  std::uint64_t zero = 0;
  double amax = 0;  // largest finite |x|
  // floor(log2 |x|) of every nonzero finite x -> how many.
  std::map<int, std::uint64_t> binades;

  void add(std::span<const float> x);
};

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
};

// Converts x * scale to `format` chunk by chunk and accumulates the stats.
// The product is taken in float32, as the GPU kernels of torch and
// Transformer Engine do before their cast; a power-of-two scale makes it
// exact. With stochastic rounding, element i draws splitmix64(seed, i).
class ScaledConversion {
 public:
  ScaledConversion(Format format, Policy policy, float scale, std::uint64_t seed = 0);
  void add(std::span<const float> x);
  [[nodiscard]] const ConversionStats& stats() const { return stats_; }
  [[nodiscard]] float scale() const { return scale_; }
  [[nodiscard]] const Format& format() const { return format_; }

 private:
  Format format_;
  Policy policy_;
  float scale_;
  std::uint64_t seed_;
  std::uint64_t position_ = 0;
  ConversionStats stats_;
  std::vector<float> scaled_;
  std::vector<std::uint64_t> bits_;
  std::vector<std::uint32_t> random_;
};

// How an MX block's shared E8M0 scale is chosen from the block's amax.
enum class BlockScaleRule : std::uint8_t {
  ocp,   // OCP MX v1.0: 2^(floor(log2 amax) - emax_elem); larger elements are then clamped
  ceil,  // CUDA / Transformer Engine: smallest 2^k >= amax / max_elem, so nothing overflows
  rne,   // nearest power of two to amax / max_elem (ties to even)
};

// The block's scale exponent k (scale = 2^k), chosen by rounding to E8M0
// through the library core; amax 0 (or no finite value) gives k = 0.
int block_scale_exponent(double amax, const Format& element, BlockScaleRule rule);

// MX-style conversion: consecutive blocks of `block` values share a scale
// 2^k; each element is converted as x * 2^-k and dequantized as r * 2^k.
// Chunks passed to add() must hold whole blocks except at the tensor's end.
class BlockScaledConversion {
 public:
  BlockScaledConversion(Format element, Policy policy, int block, BlockScaleRule rule);
  void add(std::span<const float> x);
  [[nodiscard]] const ConversionStats& stats() const { return stats_; }
  [[nodiscard]] std::uint64_t blocks() const { return blocks_; }
  [[nodiscard]] int min_scale_exponent() const { return min_k_; }
  [[nodiscard]] int max_scale_exponent() const { return max_k_; }

 private:
  Format element_;
  Policy policy_;
  int block_;
  BlockScaleRule rule_;
  ConversionStats stats_;
  std::uint64_t blocks_ = 0;
  int min_k_ = 0;
  int max_k_ = 0;
};

}  // namespace fmtcheck
