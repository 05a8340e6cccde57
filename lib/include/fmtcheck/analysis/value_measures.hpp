// What measuring one value adds to a tensor's analysis (analysis.hpp), on
// the CPU and in the GPU's kernels (FMTCHECK_HD, cuda/src/emulator/): the
// binade of an input, an MX block's scale, and the error measures of a
// result against its input. analysis.cpp's SIMD loop is the vectorised form
// of add_value_errors (tests/analysis checks the two agree).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "fmtcheck/core/decode.hpp"
#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/host_device.hpp"
#include "fmtcheck/core/policy.hpp"
#include "fmtcheck/core/round_to_format.hpp"
#include "fmtcheck/core/unpacked.hpp"

namespace fmtcheck {

// How an MX block's shared E8M0 scale is chosen from the block's amax.
enum class BlockScaleRule : std::uint8_t {
  ocp,   // OCP MX v1.0: 2^(floor(log2 amax) - emax_elem); larger elements are then clamped
  ceil,  // CUDA / Transformer Engine: smallest 2^k >= amax / max_elem, so nothing overflows
  rne,   // nearest power of two to amax / max_elem (ties to even)
};

namespace detail {

// floor(log2 |x|) of a nonzero finite magnitude, from its bits: exponent
// field, or for a subnormal the position of its leading significand bit.
template <typename Bits, int Mantissa, int Bias>
FMTCHECK_HD int binade_of(Bits magnitude) {
  const auto exponent = static_cast<int>(magnitude >> Mantissa);
  if (exponent != 0) return exponent - Bias;
  return (1 - Bias - Mantissa) + (63 - leading_zeros(static_cast<std::uint64_t>(magnitude)));
}

// Whether a nonzero finite magnitude is a power of two: no fraction bits
// (normal), or a single bit (subnormal).
template <typename Bits, int Mantissa>
FMTCHECK_HD bool is_power_of_two(Bits magnitude) {
  constexpr Bits fraction = (Bits{1} << Mantissa) - 1;
  return (magnitude >> Mantissa) != 0 ? (magnitude & fraction) == 0 : (magnitude & (magnitude - 1)) == 0;
}

}  // namespace detail

// The block's scale exponent k (scale = 2^k) for a block whose largest
// finite magnitude is amax, of an element format whose largest finite value
// is element_max and binade max_exponent, by rounding to E8M0 through the
// library core; amax 0 (or no finite value) gives k = 0.
FMTCHECK_HD inline int block_scale_exponent(double amax, int max_exponent, double element_max, BlockScaleRule rule) {
  if (!(amax > 0) || !(amax < INFINITY)) return 0;
  constexpr Encoding e8m0{8, 0, 127, Specials::fn, false, false, 8, 0};
  constexpr Encoding fp64{11, 52, 1023, Specials::ieee, true, true, 64, 0};
  Policy p;
  p.overflow = Overflow::sat;  // scales beyond E8M0's range clamp to 2^-127 .. 2^127
  // ocp: floor(log2 amax) - emax_elem, i.e. amax * 2^-emax truncated to a
  // power of two; the others round amax / max_elem up or to nearest.
  const bool ocp = rule == BlockScaleRule::ocp;
  const double target = ocp ? ldexp(amax, -max_exponent) : amax / element_max;
  p.rounding = ocp ? Rounding::rtz : rule == BlockScaleRule::ceil ? Rounding::rup : Rounding::rne;
  std::uint64_t target_bits;
  std::memcpy(&target_bits, &target, sizeof target_bits);
  const std::uint64_t code = round_to_format(unpack(fp64, target_bits), e8m0, p).bits;
  return static_cast<int>(code) - 127;  // E8M0 code c is 2^(c - 127); saturation keeps it below the NaN
}

// The error measures of values against their results, summed over a run of
// them: counts of each kind, the largest absolute and relative errors and
// the sums behind the mean and RMS relative error (ConversionStats'
// fields of the same names).
struct ValueErrors {
  std::uint64_t nan_in = 0, inf_in = 0, nonfinite_out = 0, overflow = 0, exact = 0, error_count = 0,
                rel_error_count = 0;
  double max_abs_error = 0, max_rel_error = 0, sum_rel_error = 0, sum_sq_rel_error = 0;
};

// Input x and result r (both widened to double), the result dequantized by
// the scale: r * inverse when the scale is a power of two (exact), else
// r / scale. Errors are over finite x with finite r; relative errors over
// those with x != 0.
FMTCHECK_HD inline void add_value_errors(double x, double r, double scale, bool pow2, double inverse, ValueErrors& e) {
  const double dequantized = pow2 ? r * inverse : r / scale;
  const double ax = fabs(x), ar = fabs(r);
  const bool x_finite = ax < INFINITY, r_finite = ar < INFINITY;
  e.nan_in += x != x;
  e.inf_in += ax == INFINITY;
  e.nonfinite_out += !r_finite;
  e.overflow += x_finite && !r_finite;
  e.exact += dequantized == x;
  if (!x_finite || !r_finite) return;
  const double abs_error = fabs(dequantized - x);
  ++e.error_count;
  e.max_abs_error = abs_error > e.max_abs_error ? abs_error : e.max_abs_error;
  if (x == 0) return;
  const double rel = abs_error / ax;
  ++e.rel_error_count;
  e.max_rel_error = rel > e.max_rel_error ? rel : e.max_rel_error;
  e.sum_rel_error += rel;
  e.sum_sq_rel_error += rel * rel;
}

}  // namespace fmtcheck
