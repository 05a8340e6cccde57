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
// `first` is in[0]'s position in the batch (the stream's draws follow it).
template <typename Out>
void convert_with_core(const ConvertPlan& plan, const float* in, std::size_t n, Out* out,
                       const RandomStream* stream, std::size_t first, FlagCounts* counts) {
  Policy policy = *plan.policy;
  for (std::size_t i = 0; i < n; ++i) {
    if (stream != nullptr) policy.random_bits = stream->draw(first + i);
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

#if HWY_TARGET <= HWY_AVX2
// The low 64 bits of a * b on every 64-bit lane: AVX-512 has the
// instruction; AVX2 makes it from three 32 x 32 -> 64 products.
template <class V64>
HWY_INLINE V64 MulLow64(V64 a, V64 b) {
#if HWY_TARGET <= HWY_AVX3
  return a * b;
#else
  const hn::Repartition<std::uint32_t, hn::DFromV<V64>> d32;
  const V64 low = hn::MulEven(hn::BitCast(d32, a), hn::BitCast(d32, b));
  const V64 cross = hn::MulEven(hn::BitCast(d32, hn::ShiftRight<32>(a)), hn::BitCast(d32, b)) +
                    hn::MulEven(hn::BitCast(d32, a), hn::BitCast(d32, hn::ShiftRight<32>(b)));
  return low + hn::ShiftLeft<32>(cross);
#endif
}

// RandomStream::draw(i + lane) for every lane: splitmix64 (random.hpp) on
// 64-bit lanes, two vectors of them, keeping the low half of each result.
HWY_INLINE V Draws(D d, const RandomStream& stream, std::size_t i) {
  const hn::Repartition<std::uint64_t, D> d64;
  const auto mix = [&](std::uint64_t first) {
    const auto position = hn::Iota(d64, first + 1);
    auto z = hn::Set(d64, stream.seed) + MulLow64(position, hn::Set(d64, 0x9E3779B97F4A7C15ull));
    z = MulLow64(z ^ hn::ShiftRight<30>(z), hn::Set(d64, 0xBF58476D1CE4E5B9ull));
    z = MulLow64(z ^ hn::ShiftRight<27>(z), hn::Set(d64, 0x94D049BB133111EBull));
    return hn::BitCast(d, z ^ hn::ShiftRight<31>(z));
  };
  const std::uint64_t first = stream.first + i;
  return hn::ConcatEven(d, mix(first + hn::Lanes(d64)), mix(first));
}
#else
// Older targets draw lane by lane.
HWY_INLINE V Draws(D d, const RandomStream& stream, std::size_t i) {
  HWY_ALIGN std::uint32_t draws[hn::MaxLanes(d)];
  for (std::size_t lane = 0; lane < hn::Lanes(d); ++lane) draws[lane] = stream.draw(i + lane);
  return hn::Load(d, draws);
}
#endif

// Counters of the kernel, added into FlagCounts at the end. Overflow's
// other flags follow from its sign (see Constants::saturates). Each vector
// adds the popcount of its mask: scalar work, beside the vector work.
enum Tally { kInexact, kUnderflow, kOverflow, kNegativeOverflow, kFlushed, kTinyToZero, kSubnormal, kTallies };
using Tallies = std::uint64_t[kTallies];

// The constants of one (format, policy) pair, as vectors.
template <Rounding R>
struct Constants {
  explicit Constants(const ConvertPlan& plan)
      : m(plan.mantissa_bits),
        s(23 - m),
        min_field(hn::Set(d, plan.min_field)),
        normal_shift(hn::Set(d, s)),
        shift_below_min_field(hn::Set(d, s + plan.min_field)),
        min_normal(hn::Set(d, plan.min_field << 23)),
        rebias(hn::Set(d, (plan.min_field - 1) << 23)),
        normal_low_mask(hn::Set(d, (1u << s) - 1)),
        normal_half_minus_one(hn::Set(d, (1u << (s - 1)) - 1)),
        max_finite(hn::Set(d, plan.max_finite)),
        first_normal_minus_one(hn::Set(d, (1u << m) - 1)),
        sign_shift(std::countr_zero(plan.sign_bit)),
        overflow_positive(hn::Set(d, saturates(plan, false) ? plan.max_finite : plan.overflow_code[0])),
        overflow_negative(hn::Set(d, saturates(plan, true) ? plan.sign_bit | plan.max_finite : plan.overflow_code[1])),
        tiny_positive(hn::Set(d, tiny_below(plan, false))),
        tiny_negative(hn::Set(d, tiny_below(plan, true))),
        overflow_signed(hn::GetLane(overflow_negative) == (plan.sign_bit | hn::GetLane(overflow_positive)) &&
                        (hn::GetLane(overflow_positive) & plan.sign_bit) == 0) {}

  // overflow_result: modes that round toward zero give max finite, the
  // others infinity, or NaN where the format has no infinity.
  static bool saturates(const ConvertPlan& plan, bool negative) {
    const bool toward_zero = R == Rounding::rtz || R == Rounding::rto ||
                             (negative ? R == Rounding::rup : R == Rounding::rdn);
    return plan.saturate_always || toward_zero;
  }

  // Tininess after rounding in a deterministic mode: rounded to full
  // precision with unbounded exponent, only the top ulp of the binade below
  // 2^emin can reach 2^emin, and whether it does depends on the magnitude
  // and sign alone. Magnitudes (float32 bits) below this are tiny.
  static std::uint32_t tiny_below(const ConvertPlan& plan, bool negative) {
    const std::uint32_t min_normal = plan.min_field << 23;
    const std::uint32_t ulp = 1u << (23 - plan.mantissa_bits);  // of the format, at full precision
    if (!plan.tiny_after) return min_normal;
    switch (R) {
      case Rounding::rne:
      case Rounding::rna: return min_normal - ulp / 2;  // the tie rounds up: to even 2^emin, or away
      case Rounding::rup: return negative ? min_normal : min_normal - ulp + 1;
      case Rounding::rdn: return negative ? min_normal - ulp + 1 : min_normal;
      default: return min_normal;  // rtz and rto never round up to 2^emin; sr is decided per value
    }
  }

  const D d;
  const std::uint32_t m;  // mantissa bits
  const std::uint32_t s;  // the shift from float32's mantissa to the format's
  const V zero = hn::Zero(d);
  const V one = hn::Set(d, 1u);
  const V magnitude_mask = hn::Set(d, 0x7FFFFFFFu);
  const V implicit_bit = hn::Set(d, 1u << 23);
  const V max_shift = hn::Set(d, 25u);  // any larger shift leaves the whole value below half an ulp
  const V min_field, normal_shift, shift_below_min_field, min_normal, rebias, normal_low_mask, normal_half_minus_one, max_finite,
      first_normal_minus_one;
  const int sign_shift;
  const V overflow_positive, overflow_negative, tiny_positive, tiny_negative;
  // The negative overflow code is the positive one with the sign bit (the
  // sign can then be or-ed in after the choice).
  const bool overflow_signed;
};

// One vector of values, none of them NaN or infinite. kAllNormal: every
// lane lies at or above the format's lowest binade, so no lane is tiny,
// subnormal, flushed or zero, and the code is the rebiased bits shifted.
template <Rounding R, bool kFlush, bool kAllNormal>
HWY_INLINE V ConvertVector(const ConvertPlan& plan, const Constants<R>& k, V u, V a, M subnormal_input, V r,
                           Tallies& tally) {
  const D d;
  // Only the directed modes (and an asymmetric overflow code) need the sign
  // as a mask; the compiler drops it from the others.
  const M negative = u != a;
  constexpr bool kDirected = R == Rounding::rup || R == Rounding::rdn;
  V source, shift, clamped_shift, low_mask;
  if constexpr (kAllNormal) {
    source = a - k.rebias;
    shift = clamped_shift = k.normal_shift;
    low_mask = k.normal_low_mask;
  } else {
    // The exact value as source * 2^-shift in units of the format's ulp:
    // at or above the lowest binade the rebiased float32 bits (exponent
    // field and mantissa), below it the 24-bit significand shifted one
    // more per binade, so that codes below 2^emin are subnormal.
    // Float32 subnormals (field 0) share field 1's binade without its
    // implicit bit; every binade below 2^emin adds one to the shift.
    const V binade = hn::Min(hn::Max(hn::ShiftRight<23>(a), k.one), k.min_field);
    shift = k.shift_below_min_field - binade;
    clamped_shift = hn::Min(shift, k.max_shift);
    // Field f >= min_field keeps f - min_field + 1, below it 1 (the implicit
    // bit) or 0 (a float32 subnormal).
    source = a + k.implicit_bit - hn::ShiftLeft<23>(binade);
    low_mask = (k.one << clamped_shift) - k.one;
  }
  const V kept = kAllNormal ? hn::ShiftRightSame(source, static_cast<int>(k.s)) : source >> clamped_shift;
  const V rem = source & low_mask;
  const M inexact = rem != k.zero;
  const M away = RoundAway<R>(d, kept, rem, hn::ShiftRight<1>(low_mask), shift, negative, r, plan.random_bit_count);
  V code = kept - hn::VecFromMask(d, away);

  const M overflow = code > k.max_finite;
  M inexact_flag = hn::Or(inexact, overflow);
  if constexpr (!kAllNormal) {
    M tiny;
    if (R == Rounding::sr && plan.tiny_after) {
      // The draw decides whether the top of the binade below 2^emin rounds
      // up to 2^emin at full precision.
      tiny = a < k.min_normal;
      const V top = hn::ShiftRightSame(a, static_cast<int>(k.s));
      const M reaches = RoundAway<R>(d, top, a & k.normal_low_mask, k.normal_half_minus_one, k.normal_shift,
                                     negative, r, plan.random_bit_count);
      tiny = hn::AndNot(hn::And(top + k.one == hn::ShiftRightSame(k.min_normal, static_cast<int>(k.s)), reaches),
                        tiny);
    } else if constexpr (kDirected) {
      tiny = a < hn::IfThenElse(negative, k.tiny_negative, k.tiny_positive);
    } else {
      tiny = a < k.tiny_positive;
    }
    M underflow = hn::And(tiny, inexact);
    if constexpr (kFlush) {
      M tiny_to_zero = hn::AndNot(a == k.zero, code == k.zero);
      // The core's order: daz, then overflow, then ftz.
      const M daz = hn::And(subnormal_input, MaskIf(d, plan.flush_inputs));
      const M ftz = hn::AndNot(hn::Or(daz, a == k.zero), hn::And(tiny, MaskIf(d, plan.flush_results)));
      const M flushed = hn::Or(daz, ftz);
      code = hn::IfThenZeroElse(flushed, code);
      inexact_flag = hn::AndNot(daz, hn::Or(inexact_flag, ftz));
      underflow = hn::AndNot(daz, hn::Or(underflow, ftz));
      tiny_to_zero = hn::Or(tiny_to_zero, flushed);
      tally[kFlushed] += hn::CountTrue(d, flushed);
      tally[kTinyToZero] += hn::CountTrue(d, tiny_to_zero);
    } else {
      // A zero input always gives code 0: the rest of the zeros are tiny.
      tally[kTinyToZero] += hn::CountTrue(d, code == k.zero) - hn::CountTrue(d, a == k.zero);
    }
    tally[kUnderflow] += hn::CountTrue(d, underflow);
    // Nonzero codes below the first normal (overflowed codes are above).
    tally[kSubnormal] += hn::CountTrue(d, (code - k.one) < k.first_normal_minus_one);
  }
  tally[kInexact] += hn::CountTrue(d, inexact_flag);
  tally[kOverflow] += hn::CountTrue(d, overflow);
  if constexpr (kDirected) tally[kNegativeOverflow] += hn::CountTrue(d, hn::And(overflow, negative));

  V sign = hn::ShiftLeftSame(hn::ShiftRight<31>(u), k.sign_shift);
  if (!kAllNormal && !plan.negative_zero) sign = hn::IfThenZeroElse(code == k.zero, sign);
  if (!kDirected && k.overflow_signed) return hn::IfThenElse(overflow, k.overflow_positive, code) | sign;
  return hn::IfThenElse(overflow, hn::IfThenElse(negative, k.overflow_negative, k.overflow_positive), code | sign);
}

#if HWY_TARGET <= HWY_AVX2
// fp32 -> fp16 in rne by the CPU's own vcvtps2ph (F16C, every AVX2 and
// AVX-512 target): the immediate selects nearest-even whatever MXCSR says,
// and its results equal the core's on every non-NaN input (proven again in
// tests/speed). The flags follow from the result: the value is inexact iff
// it does not widen back to the input, tiny after rounding iff below
// 2^-14 - 2^-26 (the half-ulp below 2^-14 rounds up to it).
HWY_INLINE V ConvertVectorF16c(const Constants<Rounding::rne>& k, V u, V a, Tallies& tally) {
  const D d;
  const hn::Rebind<float, D> df;
  const hn::Rebind<hwy::float16_t, D> dh;
  const hn::Rebind<std::uint16_t, D> dh_bits;
  const auto x = hn::BitCast(df, u);
  const auto half = hn::DemoteTo(dh, x);
  const V bits = hn::PromoteTo(d, hn::BitCast(dh_bits, half));
  const V code = bits & hn::Set(d, 0x7FFFu);
  const M inexact = hn::RebindMask(d, hn::PromoteTo(df, half) != x);  // overflow: infinity != x
  const M overflow = code == hn::Set(d, 0x7C00u);
  tally[kInexact] += hn::CountTrue(d, inexact);
  tally[kUnderflow] += hn::CountTrue(d, hn::And(inexact, a < k.tiny_positive));
  tally[kOverflow] += hn::CountTrue(d, overflow);
  tally[kTinyToZero] += hn::CountTrue(d, hn::AndNot(a == k.zero, code == k.zero));
  tally[kSubnormal] += hn::CountTrue(d, (code - k.one) < k.first_normal_minus_one);
  return bits;
}
#endif

// kFlush: the policy flushes inputs (daz) or results (ftz).
template <Rounding R, bool kFlush, typename Out>
void ConvertKernel(const ConvertPlan& plan, const float* in, std::size_t n, Out* out, const RandomStream* stream,
                   FlagCounts* counts) {
  const D d;
  const hn::Rebind<float, D> df;
  const hn::Rebind<std::int32_t, D> di;
  const hn::Rebind<Out, D> dout;
  const std::size_t lanes = hn::Lanes(d);
  const Constants<R> k(plan);
  const V max_finite_float = hn::Set(d, 0x7F7FFFFFu);
  // Lanes from min_normal up to the top of the format's highest binade (any
  // larger overflows in the general path) take the short path together.
  const V normal_span = hn::Set(d, ((static_cast<std::uint32_t>(plan.max_field) + 1) << 23) - (plan.min_field << 23));
#if HWY_TARGET <= HWY_AVX2
  constexpr bool kCanF16c = R == Rounding::rne && !kFlush && sizeof(Out) == 2;
  const bool f16c = kCanF16c && plan.hardware_fp16;
#endif

  std::size_t i = 0;
  std::uint64_t served = 0;
  Tallies tally = {};
  for (; i + lanes <= n; i += lanes) {
    const V u = hn::BitCast(d, hn::LoadU(df, in + i));
    const V a = u & k.magnitude_mask;
    M to_core = a > max_finite_float;  // infinities and NaNs
    M subnormal_input = MaskIf(d, false);
    if (kFlush || plan.subnormal_inputs_to_core) {
      subnormal_input = hn::AndNot(a == k.zero, a < k.implicit_bit);
      if (plan.subnormal_inputs_to_core) to_core = hn::Or(to_core, subnormal_input);
    }
    if (HWY_UNLIKELY(!hn::AllFalse(d, to_core))) {
      convert_with_core(plan, in + i, lanes, out + i, stream, i, counts);
      continue;
    }
    served += lanes;
    const V r = R == Rounding::sr ? Draws(d, *stream, i) : k.zero;
    V bits;
#if HWY_TARGET <= HWY_AVX2
    if (kCanF16c && f16c) {
      if constexpr (kCanF16c) bits = ConvertVectorF16c(k, u, a, tally);
    } else
#endif
    if (hn::AllTrue(d, (a - k.min_normal) < normal_span)) {
      bits = ConvertVector<R, kFlush, true>(plan, k, u, a, subnormal_input, r, tally);
    } else {
      bits = ConvertVector<R, kFlush, false>(plan, k, u, a, subnormal_input, r, tally);
    }
    hn::StoreU(hn::DemoteTo(dout, hn::BitCast(di, bits)), dout, out + i);
  }
  const std::uint64_t saturated = (k.saturates(plan, false) ? tally[kOverflow] - tally[kNegativeOverflow] : 0) +
                                  (k.saturates(plan, true) ? tally[kNegativeOverflow] : 0);
  auto& c = counts->count;
  c[static_cast<unsigned>(Flag::inexact)] += tally[kInexact];
  c[static_cast<unsigned>(Flag::underflow)] += tally[kUnderflow];
  c[static_cast<unsigned>(Flag::overflow)] += tally[kOverflow];
  c[static_cast<unsigned>(Flag::saturated)] += saturated;
  c[static_cast<unsigned>(Flag::nan_produced)] += plan.overflow_is_nan ? tally[kOverflow] - saturated : 0;
  c[static_cast<unsigned>(Flag::flushed)] += tally[kFlushed];
  c[static_cast<unsigned>(Flag::tiny_to_zero)] += tally[kTinyToZero];
  c[static_cast<unsigned>(Flag::subnormal)] += tally[kSubnormal];
  counts->values += served;
  convert_with_core(plan, in + i, n - i, out + i, stream, i, counts);
}

template <Rounding R, typename Out>
void ConvertKernel(const ConvertPlan& plan, const float* in, std::size_t n, Out* out, const RandomStream* stream,
                   FlagCounts* counts) {
  if (plan.flush_inputs || plan.flush_results) return ConvertKernel<R, true>(plan, in, n, out, stream, counts);
  ConvertKernel<R, false>(plan, in, n, out, stream, counts);
}

template <typename Out>
void ConvertTo(const ConvertPlan& plan, const float* in, std::size_t n, Out* out, const RandomStream* stream,
               FlagCounts* counts) {
  switch (plan.policy->rounding) {
    case Rounding::rne: return ConvertKernel<Rounding::rne>(plan, in, n, out, stream, counts);
    case Rounding::rna: return ConvertKernel<Rounding::rna>(plan, in, n, out, stream, counts);
    case Rounding::rtz: return ConvertKernel<Rounding::rtz>(plan, in, n, out, stream, counts);
    case Rounding::rup: return ConvertKernel<Rounding::rup>(plan, in, n, out, stream, counts);
    case Rounding::rdn: return ConvertKernel<Rounding::rdn>(plan, in, n, out, stream, counts);
    case Rounding::rto: return ConvertKernel<Rounding::rto>(plan, in, n, out, stream, counts);
    case Rounding::sr: return ConvertKernel<Rounding::sr>(plan, in, n, out, stream, counts);
  }
}

void ConvertToU8(const ConvertPlan& plan, const float* in, std::size_t n, std::uint8_t* out,
                 const RandomStream* stream, FlagCounts* counts) {
  ConvertTo(plan, in, n, out, stream, counts);
}
void ConvertToU16(const ConvertPlan& plan, const float* in, std::size_t n, std::uint16_t* out,
                  const RandomStream* stream, FlagCounts* counts) {
  ConvertTo(plan, in, n, out, stream, counts);
}

}  // namespace HWY_NAMESPACE
}  // namespace fmtcheck::detail
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace fmtcheck::detail {

HWY_EXPORT(ConvertToU8);
HWY_EXPORT(ConvertToU16);

void convert_float32_fast(const ConvertPlan& plan, const float* in, std::size_t n, std::uint8_t* out,
                          const RandomStream* stream, FlagCounts* counts) {
  HWY_DYNAMIC_DISPATCH(ConvertToU8)(plan, in, n, out, stream, counts);
}
void convert_float32_fast(const ConvertPlan& plan, const float* in, std::size_t n, std::uint16_t* out,
                          const RandomStream* stream, FlagCounts* counts) {
  HWY_DYNAMIC_DISPATCH(ConvertToU16)(plan, in, n, out, stream, counts);
}

}  // namespace fmtcheck::detail
#endif
