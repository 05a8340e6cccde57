// The integer arithmetic of a tensor-core block that the reference
// (dot_product_add) and the GEMM kernels share, on the CPU and in the GPU's
// kernels (FMTCHECK_HD, cuda/src/emulator/): exact terms, a block's
// fixed-point sum turned into an unpacked value and rounded through
// round_to_format, and CDNA3's late addition of C. One definition for all.
#pragma once

#include <algorithm>
#include <cstdint>

#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/host_device.hpp"
#include "fmtcheck/core/policy.hpp"
#include "fmtcheck/core/round_to_format.hpp"
#include "fmtcheck/core/unpacked.hpp"
#include "fmtcheck/tensor_core/tensor_core.hpp"

namespace fmtcheck::detail {

// An exact finite term: (-1)^negative * magnitude * 2^lsb, aligned by its
// exponent `align`. Hardware aligns a product by the sum of its operands'
// exponents (its significand lies in [1, 4), not normalised), and reads a
// subnormal's exponent as that of the lowest binade, as its exponent field
// says; the published A100 and H100 data confirm both.
struct Term {
  bool negative = false;
  std::uint64_t magnitude = 0;  // 0 for a zero term
  int lsb = 0;
  int align = 0;
};

// The integer significand of a finite unpacked value of encoding f.
FMTCHECK_HD inline Term to_term(const Unpacked& x, const Encoding& f) {
  if (!x.is_finite_nonzero()) return {x.sign, 0, 0, 0};
  const int p = f.precision();
  return {x.sign, x.significand >> (64 - p), x.exponent - (p - 1), std::max(x.exponent, f.min_exponent())};
}

// The top `top_bits` bits of |sum| (in top64), the rest only as `sticky`,
// times 2^unit, as an unpacked value.
FMTCHECK_HD inline Unpacked unpack_sum(std::uint64_t top64, int top_bits, bool sticky, bool negative, int unit) {
  Unpacked x;
  x.kind = Unpacked::Kind::finite;
  x.sign = negative;
  x.significand = top64 << (64 - top_bits);
  x.exponent = unit + top_bits - 1;
  x.sticky = sticky;
  return x;
}

// sum * 2^unit as an exact unpacked value; sum != 0.
FMTCHECK_HD inline Unpacked fixed_point_value(std::int64_t sum, int unit) {
  const bool negative = sum < 0;
  const std::uint64_t m = negative ? 0 - static_cast<std::uint64_t>(sum) : static_cast<std::uint64_t>(sum);
  return unpack_sum(m, 64 - leading_zeros(m), false, negative, unit);
}

// How a block's sum is rounded to its output (fp32 or fp16).
struct BlockRounding {
  Encoding target;  // out itself, or on Ada/Hopper FP8 an fp32 with 13 fraction bits (same container)
  Policy policy;
};
FMTCHECK_HD inline BlockRounding block_rounding(const DotModel& model, const Encoding& out) {
  BlockRounding r{out, {}};
  if (out == encodings::fp32()) {
    r.policy.rounding = model.fp32_rounding;
    // Ada and Hopper FP8 keep 13 fraction bits: an fp32 whose last bits are
    // always zero, in fp32's own container, so its bits are fp32 bits.
    r.target.mantissa_bits = model.fp32_fraction_bits;
    r.target.pad_bits = out.mantissa_bits - model.fp32_fraction_bits;
  } else {
    r.policy.rounding = model.fp16_rounding;
  }
  return r;
}

// x * 2^-shift rounded toward minus infinity (shift may be negative: exact;
// a zero C's term comes with any shift, far below -63 too).
FMTCHECK_HD inline std::int64_t shift_down(std::int64_t x, int shift) {
  if (x == 0) return 0;
  if (shift <= 0) return x * (std::int64_t{1} << -shift);
  if (shift >= 63) return x < 0 ? -1 : 0;
  return x >> shift;  // arithmetic: floor
}

// x * 2^-shift rounded toward zero.
FMTCHECK_HD inline std::int64_t shift_toward_zero(std::int64_t x, int shift) {
  if (x == 0) return 0;
  if (shift <= 0) return x * (std::int64_t{1} << -shift);
  const std::int64_t m = shift >= 63 ? 0 : (x < 0 ? -x : x) >> shift;
  return x < 0 ? -m : m;
}

// CDNA3 (late_c, odd_even; structures.cpp): a block's products summed
// without C, in units of 2^unit, aligned to the largest exponent e_max among
// its nonzero terms; `any` is false when every product is zero.
struct PartialSum {
  std::int64_t sum = 0;
  int unit = 0;
  int e_max = 0;
  bool any = false;
};

// The even-k and odd-k sums: the one with the smaller e_max rounded toward
// minus infinity onto the other's units, then added.
FMTCHECK_HD inline PartialSum combine_odd_even(const PartialSum& even, const PartialSum& odd) {
  if (!even.any || !odd.any) return even.any ? even : odd;
  const PartialSum& big = even.e_max >= odd.e_max ? even : odd;
  const PartialSum& small = even.e_max >= odd.e_max ? odd : even;
  PartialSum sum = big;
  sum.sum += shift_down(small.sum, big.unit - small.unit);
  return sum;
}

// CDNA3 adds C with F + 7 = 31 bits below its exponent when C is the larger.
inline constexpr int late_c_extra_bits = 7;
// CDNA3 FP8: a C more than this many binades below e_max is truncated, not rounded down.
inline constexpr int odd_even_c_truncation_binades = 25;

// D = the sum plus C (fp32 bits, finite), added late as CDNA3 does.
// products_negative_zero: every product of the block is -0.
FMTCHECK_HD inline Conversion add_late_c(const DotModel& model, const PartialSum& sum, std::uint64_t c,
                                         bool products_negative_zero) {
  constexpr Encoding fp32 = encodings::fp32();
  const Unpacked cc = unpack(fp32, c);
  const Term ct = to_term(cc, fp32);
  if (!sum.any) {  // no nonzero product: D is C (-0 only when C and every product are -0)
    if (ct.magnitude != 0) return {c, {}};
    return {(cc.sign && products_negative_zero) ? fp32.sign_bit() : 0, {}};
  }
  // C's exponent, at least -126 (a zero C counts as 2^-126).
  const int e_c = ct.magnitude != 0 ? ct.align : fp32.min_exponent();
  const std::int64_t c_signed = ct.negative ? -static_cast<std::int64_t>(ct.magnitude)
                                            : static_cast<std::int64_t>(ct.magnitude);
  std::int64_t total = 0;
  int unit = 0;
  if (sum.e_max < e_c) {  // C sets the units; the sum is rounded down onto them
    unit = e_c - model.fraction_bits - late_c_extra_bits;
    total = shift_down(sum.sum, unit - sum.unit) + shift_down(c_signed, unit - ct.lsb);
  } else {  // the sum sets the units; C is rounded down onto them (FP8: truncated when far below)
    unit = sum.unit;
    const bool truncate = model.structure == DotStructure::odd_even && e_c < sum.e_max - odd_even_c_truncation_binades;
    total = sum.sum + (truncate ? shift_toward_zero(c_signed, unit - ct.lsb) : shift_down(c_signed, unit - ct.lsb));
  }
  if (total == 0) return {0, {}};
  const Policy nearest;  // to nearest even, subnormals kept, overflow to infinity
  return round_to_format(fixed_point_value(total, unit), fp32, nearest);
}

}  // namespace fmtcheck::detail
