// The SIMD form of round_to_format for float32 inputs (see
// batch_convert_fast.hpp). Each 32-bit lane follows the core's steps in the
// same order, on the float32 bits instead of a 64-bit significand:
//
//   - At or above the format's lowest binade, the code is the float32 bits
//     with the exponent rebiased, shifted right by 23 - M: exponent field and
//     mantissa move together, so a carry out of the mantissa is the next
//     binade, exactly as the core's "c or c + 1" on codes.
//   - Below it, the 24-bit significand is shifted further (subnormal codes).
//   - The discarded bits decide c or c + 1 per rounding mode (round_away in
//     round_to_format.cpp), then overflow, tininess, ftz/daz and the flags
//     are derived as the core derives them.
//
// Highway compiles this file once per x86-64 level (foreach_target.h) and
// HWY_DYNAMIC_DISPATCH picks the best one the CPU has.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "batch_convert_fast.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <bit>

#include "batch_convert_fast.hpp"
#include "fmtcheck/round_to_format.hpp"
#include "fmtcheck/unpacked.hpp"

#ifndef FMTCHECK_BATCH_CONVERT_FAST_ONCE
#define FMTCHECK_BATCH_CONVERT_FAST_ONCE
namespace fmtcheck::detail {

// The values the kernel does not take: converted one by one by the core.
template <typename Out>
void convert_with_core(const ConvertPlan& plan, const float* in, std::size_t n, Out* out,
                       const std::uint32_t* random, FlagCounts* counts) {
  Policy policy = *plan.policy;
  for (std::size_t i = 0; i < n; ++i) {
    if (random != nullptr) policy.random_bits = random[i];
    const Conversion c = round_to_format(unpack(in[i]), *plan.format, policy);
    out[i] = static_cast<Out>(c.bits);
    counts->add(c.flags);
  }
}

}  // namespace fmtcheck::detail
#endif

HWY_BEFORE_NAMESPACE();
namespace fmtcheck::detail {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using D = hn::ScalableTag<std::uint32_t>;
using V = hn::Vec<D>;
using M = hn::Mask<D>;

HWY_INLINE M MaskIf(D d, bool b) { return hn::MaskFromVec(hn::Set(d, b ? ~0u : 0u)); }
HWY_INLINE M AtLeast(V a, V b) { return hn::Not(a < b); }

// The first `bits` bits of the discarded part rem of a value shifted right
// by `shift` (Truncated::sr_top in the core).
HWY_INLINE V SrTop(D d, V rem, V shift, std::uint32_t bits) {
  const V b = hn::Set(d, bits);
  const V thirty_one = hn::Set(d, 31u);
  const V down = rem >> hn::Min(shift - b, thirty_one);
  const V up = rem << hn::Min(b - shift, thirty_one);
  return hn::IfThenElse(AtLeast(shift, b), down, up);
}

// Whether to take code c + 1 instead of the truncated code c (round_away in
// the core): kept holds c's low bits (its parity is c's), rem the discarded
// bits, half_minus_one one less than half an ulp, shift the unclamped shift.
template <Rounding R>
HWY_INLINE M RoundAway(D d, V kept, V rem, V half_minus_one, V shift, M negative, V random,
                       std::uint32_t random_bit_count) {
  const V zero = hn::Zero(d);
  const V one = hn::Set(d, 1u);
  if constexpr (R == Rounding::rne) {
    // rem > half, or rem == half with c odd: rem + parity > half.
    return rem > half_minus_one + (one ^ (kept & one));
  } else if constexpr (R == Rounding::rna) {
    return rem > half_minus_one;
  } else if constexpr (R == Rounding::rtz) {
    return MaskIf(d, false);
  } else if constexpr (R == Rounding::rup) {
    return hn::AndNot(negative, rem != zero);
  } else if constexpr (R == Rounding::rdn) {
    return hn::And(negative, rem != zero);
  } else if constexpr (R == Rounding::rto) {
    return hn::AndNot((kept & one) != zero, rem != zero);
  } else {
    // Stochastic: sr_top + r > mask, written so that nothing overflows 32 bits.
    const V mask = hn::Set(d, random_bit_count == 32 ? ~0u : (1u << random_bit_count) - 1);
    return (random & mask) > (mask - SrTop(d, rem, shift, random_bit_count));
  }
}

// Counters of the kernel, one per lane, emptied into FlagCounts per block.
// Overflow's other flags follow from its sign (see overflow_code below).
enum Tally { kInexact, kUnderflow, kOverflow, kNegativeOverflow, kFlushed, kTinyToZero, kSubnormal, kTallies };

// kFlush: the policy flushes inputs (daz) or results (ftz).
template <Rounding R, bool kFlush, typename Out>
void ConvertKernel(const ConvertPlan& plan, const float* in, std::size_t n, Out* out, const std::uint32_t* random,
                   FlagCounts* counts) {
  const D d;
  const hn::Rebind<float, D> df;
  const hn::Rebind<std::int32_t, D> di;
  const hn::Rebind<Out, D> dout;
  const std::size_t lanes = hn::Lanes(d);

  const std::uint32_t m = plan.mantissa_bits;
  const std::uint32_t s = 23 - m;  // the shift from float32's mantissa to the format's
  const V zero = hn::Zero(d);
  const V one = hn::Set(d, 1u);
  const V magnitude_mask = hn::Set(d, 0x7FFFFFFFu);
  const V mantissa_mask = hn::Set(d, 0x7FFFFFu);
  const V all_ones_field = hn::Set(d, 0xFFu);
  const V min_field = hn::Set(d, plan.min_field);
  const V normal_shift = hn::Set(d, s);
  const V max_shift = hn::Set(d, 25u);  // any larger shift leaves the whole value below half an ulp
  const V min_normal = hn::Set(d, plan.min_field << 23);
  const V min_normal_top = hn::Set(d, plan.min_field << m);
  const V normal_low_mask = hn::Set(d, (1u << s) - 1);
  const V normal_half_minus_one = hn::Set(d, (1u << (s - 1)) - 1);
  const V max_finite = hn::Set(d, plan.max_finite);
  const V first_normal_minus_one = hn::Set(d, (1u << m) - 1);
  const V fixed_random = hn::Set(d, plan.random_bits);
  const int sign_shift = std::countr_zero(plan.sign_bit);
  // overflow_result: modes that round toward zero give max finite, the
  // others infinity, or NaN where the format has no infinity.
  constexpr bool positive_toward_zero = R == Rounding::rtz || R == Rounding::rto || R == Rounding::rdn;
  constexpr bool negative_toward_zero = R == Rounding::rtz || R == Rounding::rto || R == Rounding::rup;
  const bool saturate_positive = plan.saturate_always || positive_toward_zero;
  const bool saturate_negative = plan.saturate_always || negative_toward_zero;
  const V overflow_positive = hn::Set(d, saturate_positive ? plan.max_finite : plan.overflow_code[0]);
  const V overflow_negative =
      hn::Set(d, saturate_negative ? plan.sign_bit | plan.max_finite : plan.overflow_code[1]);

  std::size_t i = 0;
  std::uint64_t served = 0;
  while (i + lanes <= n) {
    V tally[kTallies];
    for (V& t : tally) t = zero;
    // Each counter gains at most one per vector: empty them before 2^32.
    const std::size_t block_end = i + std::min(std::size_t{1} << 30, n - i);
    for (; i + lanes <= block_end; i += lanes) {
      const V u = hn::BitCast(d, hn::LoadU(df, in + i));
      const V a = u & magnitude_mask;
      const V field = hn::ShiftRight<23>(a);
      M to_core = field == all_ones_field;
      M subnormal_input = MaskIf(d, false);
      if (kFlush || plan.subnormal_inputs_to_core) {
        subnormal_input = hn::AndNot(a == zero, field == zero);
        if (plan.subnormal_inputs_to_core) to_core = hn::Or(to_core, subnormal_input);
      }
      if (HWY_UNLIKELY(!hn::AllFalse(d, to_core))) {
        convert_with_core(plan, in + i, lanes, out + i, random == nullptr ? nullptr : random + i, counts);
        continue;
      }
      served += lanes;
      const M negative = u != a;
      const V r = R == Rounding::sr && random != nullptr ? hn::LoadU(d, random + i) : fixed_random;

      // The exact value as source * 2^-shift in units of the format's ulp:
      // at or above the lowest binade the rebiased float32 bits (exponent
      // field and mantissa), below it the 24-bit significand shifted one
      // more per binade, so that codes below 2^emin are subnormal.
      const V clamped_field = hn::Max(field, one);
      const V excess = hn::Max(clamped_field, min_field) - clamped_field;  // binades below 2^emin
      const V shift = normal_shift + excess;
      const V clamped_shift = hn::Min(shift, max_shift);
      const V exponent_part = hn::Max(field, min_field) - min_field + hn::Min(field, one);
      const V source = (a & mantissa_mask) + hn::ShiftLeft<23>(exponent_part);
      const V low_mask = (one << clamped_shift) - one;
      const V kept = source >> clamped_shift;
      const V rem = source & low_mask;
      const M inexact = rem != zero;
      const M away = RoundAway<R>(d, kept, rem, hn::ShiftRight<1>(low_mask), shift, negative, r, plan.random_bit_count);
      V code = kept - hn::VecFromMask(d, away);

      const M overflow = code > max_finite;
      M tiny = a < min_normal;
      if (plan.tiny_after) {
        // Rounded to full precision with unbounded exponent, only the top
        // of the binade below 2^emin can reach 2^emin.
        const V top = hn::ShiftRightSame(a, static_cast<int>(s));
        const M reaches = RoundAway<R>(d, top, a & normal_low_mask, normal_half_minus_one, normal_shift, negative, r,
                                       plan.random_bit_count);
        tiny = hn::AndNot(hn::And(top + one == min_normal_top, reaches), tiny);
      }
      M inexact_flag = hn::Or(inexact, overflow);
      M underflow = hn::And(tiny, inexact);
      M tiny_to_zero = hn::AndNot(a == zero, code == zero);
      if constexpr (kFlush) {
        // The core's order: daz, then overflow, then ftz.
        const M daz = hn::And(subnormal_input, MaskIf(d, plan.flush_inputs));
        const M ftz = hn::AndNot(hn::Or(daz, a == zero), hn::And(tiny, MaskIf(d, plan.flush_results)));
        const M flushed = hn::Or(daz, ftz);
        code = hn::IfThenZeroElse(flushed, code);
        inexact_flag = hn::AndNot(daz, hn::Or(inexact_flag, ftz));
        underflow = hn::AndNot(daz, hn::Or(underflow, ftz));
        tiny_to_zero = hn::Or(tiny_to_zero, flushed);
        tally[kFlushed] = tally[kFlushed] - hn::VecFromMask(d, flushed);
      }
      tally[kInexact] = tally[kInexact] - hn::VecFromMask(d, inexact_flag);
      tally[kUnderflow] = tally[kUnderflow] - hn::VecFromMask(d, underflow);
      tally[kOverflow] = tally[kOverflow] - hn::VecFromMask(d, overflow);
      tally[kNegativeOverflow] = tally[kNegativeOverflow] - hn::VecFromMask(d, hn::And(overflow, negative));
      tally[kTinyToZero] = tally[kTinyToZero] - hn::VecFromMask(d, tiny_to_zero);
      // Nonzero codes below the first normal (overflowed codes are above).
      tally[kSubnormal] = tally[kSubnormal] - hn::VecFromMask(d, (code - one) < first_normal_minus_one);

      V sign = hn::ShiftLeftSame(hn::ShiftRight<31>(u), sign_shift);
      if (!plan.negative_zero) sign = hn::IfThenZeroElse(code == zero, sign);
      const V bits = hn::IfThenElse(overflow, hn::IfThenElse(negative, overflow_negative, overflow_positive),
                                    code | sign);
      hn::StoreU(hn::DemoteTo(dout, hn::BitCast(di, bits)), dout, out + i);
    }
    HWY_ALIGN std::uint32_t lane_counts[hn::MaxLanes(d)];
    std::uint64_t sums[kTallies];
    for (int t = 0; t < kTallies; ++t) {
      hn::Store(tally[t], d, lane_counts);
      sums[t] = 0;
      for (std::size_t l = 0; l < lanes; ++l) sums[t] += lane_counts[l];
    }
    const std::uint64_t saturated = (saturate_positive ? sums[kOverflow] - sums[kNegativeOverflow] : 0) +
                                    (saturate_negative ? sums[kNegativeOverflow] : 0);
    auto& c = counts->count;
    c[static_cast<unsigned>(Flag::inexact)] += sums[kInexact];
    c[static_cast<unsigned>(Flag::underflow)] += sums[kUnderflow];
    c[static_cast<unsigned>(Flag::overflow)] += sums[kOverflow];
    c[static_cast<unsigned>(Flag::saturated)] += saturated;
    c[static_cast<unsigned>(Flag::nan_produced)] += plan.overflow_is_nan ? sums[kOverflow] - saturated : 0;
    c[static_cast<unsigned>(Flag::flushed)] += sums[kFlushed];
    c[static_cast<unsigned>(Flag::tiny_to_zero)] += sums[kTinyToZero];
    c[static_cast<unsigned>(Flag::subnormal)] += sums[kSubnormal];
  }
  counts->values += served;
  convert_with_core(plan, in + i, n - i, out + i, random == nullptr ? nullptr : random + i, counts);
}

template <Rounding R, typename Out>
void ConvertKernel(const ConvertPlan& plan, const float* in, std::size_t n, Out* out, const std::uint32_t* random,
                   FlagCounts* counts) {
  if (plan.flush_inputs || plan.flush_results) return ConvertKernel<R, true>(plan, in, n, out, random, counts);
  ConvertKernel<R, false>(plan, in, n, out, random, counts);
}

template <typename Out>
void ConvertTo(const ConvertPlan& plan, const float* in, std::size_t n, Out* out, const std::uint32_t* random,
               FlagCounts* counts) {
  switch (plan.policy->rounding) {
    case Rounding::rne: return ConvertKernel<Rounding::rne>(plan, in, n, out, random, counts);
    case Rounding::rna: return ConvertKernel<Rounding::rna>(plan, in, n, out, random, counts);
    case Rounding::rtz: return ConvertKernel<Rounding::rtz>(plan, in, n, out, random, counts);
    case Rounding::rup: return ConvertKernel<Rounding::rup>(plan, in, n, out, random, counts);
    case Rounding::rdn: return ConvertKernel<Rounding::rdn>(plan, in, n, out, random, counts);
    case Rounding::rto: return ConvertKernel<Rounding::rto>(plan, in, n, out, random, counts);
    case Rounding::sr: return ConvertKernel<Rounding::sr>(plan, in, n, out, random, counts);
  }
}

void ConvertToU8(const ConvertPlan& plan, const float* in, std::size_t n, std::uint8_t* out,
                 const std::uint32_t* random, FlagCounts* counts) {
  ConvertTo(plan, in, n, out, random, counts);
}
void ConvertToU16(const ConvertPlan& plan, const float* in, std::size_t n, std::uint16_t* out,
                  const std::uint32_t* random, FlagCounts* counts) {
  ConvertTo(plan, in, n, out, random, counts);
}

}  // namespace HWY_NAMESPACE
}  // namespace fmtcheck::detail
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace fmtcheck::detail {

HWY_EXPORT(ConvertToU8);
HWY_EXPORT(ConvertToU16);

void convert_float32_fast(const ConvertPlan& plan, const float* in, std::size_t n, std::uint8_t* out,
                          const std::uint32_t* random, FlagCounts* counts) {
  HWY_DYNAMIC_DISPATCH(ConvertToU8)(plan, in, n, out, random, counts);
}
void convert_float32_fast(const ConvertPlan& plan, const float* in, std::size_t n, std::uint16_t* out,
                          const std::uint32_t* random, FlagCounts* counts) {
  HWY_DYNAMIC_DISPATCH(ConvertToU16)(plan, in, n, out, random, counts);
}

}  // namespace fmtcheck::detail
#endif
