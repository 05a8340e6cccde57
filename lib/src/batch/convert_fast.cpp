// The SIMD form of round_to_format for float32 inputs (see
// convert_fast.hpp). Each lane follows the core's steps in the same
// order, on the source bits instead of a 64-bit significand:
//
//   - At or above the format's lowest binade, the code is the source bits
//     with the exponent rebiased, shifted right by (source mantissa - M):
//     exponent field and mantissa move together, so a carry out of the
//     mantissa is the next binade, exactly as the core's "c or c + 1" on codes.
//   - Below it, the significand is shifted further (subnormal codes).
//   - The discarded bits decide c or c + 1 per rounding mode (round_away in
//     round_to_format.cpp), then overflow, tininess, ftz/daz and the flags
//     are derived as the core derives them.
//
// The source is float32 itself (32-bit lanes), or, for 8-bit formats in
// deterministic modes, float32 first narrowed to bf16 by round-to-odd
// (16-bit lanes, see NarrowToOddBf16). fp16 is the CPU's vcvtps2ph. E8M0
// and fp32/fp64 take routes of their own (convert_power_of_two-inl.h,
// convert_exact-inl.h).
//
// Highway compiles this file once per x86-64 level (foreach_target.h); the
// kernel exists on AVX-512 and AVX2 only, the two targets CI proves on
// every input (tests/batch). Every other pass, the baseline Highway always
// compiles included, is empty, and convert_batch takes the core on a CPU
// without AVX2.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "batch/convert_fast.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <bit>

#include "batch/convert_fast.hpp"

#if HWY_TARGET <= HWY_AVX2
HWY_BEFORE_NAMESPACE();
namespace fmtcheck::detail {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using D = hn::ScalableTag<std::uint32_t>;  // one lane per input value
using V = hn::Vec<D>;
using M = hn::Mask<D>;

template <class DL>
HWY_INLINE hn::Mask<DL> MaskIf(DL d, bool b) {
  return hn::MaskFromVec(hn::Set(d, b ? hn::TFromD<DL>(~0u) : hn::TFromD<DL>(0)));
}
template <class VL>
HWY_INLINE auto AtLeast(VL a, VL b) { return hn::Not(a < b); }

// The first `bits` bits of the discarded part rem of a value shifted right
// by `shift` (Truncated::sr_top in the core). 32-bit lanes only.
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
template <Rounding R, class DL, class VL = hn::Vec<DL>, class ML = hn::Mask<DL>>
HWY_INLINE ML RoundAway(DL d, VL kept, VL rem, VL half_minus_one, VL shift, ML negative, V random,
                        std::uint32_t random_bit_count) {
  const VL zero = hn::Zero(d);
  const VL one = hn::Set(d, 1);
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
    // Stochastic (float32 lanes only): sr_top + r > mask, written so that
    // nothing overflows 32 bits.
    const V mask = hn::Set(d, random_bit_count == 32 ? ~0u : (1u << random_bit_count) - 1);
    return (random & mask) > (mask - SrTop(d, rem, shift, random_bit_count));
  }
}

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

// RandomStream::draw(i + lane) for every lane, from an even position:
// splitmix64 (random.hpp) on 64-bit lanes, whose halves are the draws of
// two neighbouring lanes in little-endian order.
HWY_INLINE V Draws(D d, const RandomStream& stream, std::size_t i) {
  using namespace splitmix64_constants;
  const hn::Repartition<std::uint64_t, D> d64;
  const auto position = hn::Iota(d64, (stream.first + i) / 2 + 1);
  auto z = hn::Set(d64, stream.seed) + MulLow64(position, hn::Set(d64, gamma));
  z = MulLow64(z ^ hn::ShiftRight<30>(z), hn::Set(d64, mix1));
  z = MulLow64(z ^ hn::ShiftRight<27>(z), hn::Set(d64, mix2));
  return hn::BitCast(d, z ^ hn::ShiftRight<31>(z));
}

// Counters of the kernel, added into FlagCounts at the end. Overflow's
// other flags follow from its sign (see Constants::saturates). Each vector
// adds the popcount of its mask: scalar work, beside the vector work.
enum Tally { kInexact, kUnderflow, kOverflow, kNegativeOverflow, kFlushed, kTinyToZero, kSubnormal, kTallies };
using Tallies = std::uint64_t[kTallies];
// The same counts in every other slot, for the 8-bit route through bf16:
// there GCC's straight-line vectorizer paired the adds of two neighbouring
// counts into one SSE add, whose pair of counts went through the stack on
// every step (e4m3 rne +7%, rtz +11%, ftz +8% without it). The float32
// route's loop has no such pair, so it keeps Tallies.
struct SpreadTallies {
  std::uint64_t slot[2 * kTallies] = {};
  std::uint64_t& operator[](int t) { return slot[2 * t]; }
};

// The bits a lane's rounding starts from: float32's, or bf16's after the
// kernel has narrowed float32 to bf16 by round-to-odd (NarrowToOddBf16).
struct Float32Bits {
  using Lane = std::uint32_t;
  static constexpr std::uint32_t kMantissa = 23, kBias = 127;
};
struct Bf16Bits {
  using Lane = std::uint16_t;
  static constexpr std::uint32_t kMantissa = 7, kBias = 127;
};

// The constants of one (format, policy) pair, as vectors of the source's
// lanes: one lane per input value of a vector (DLane's default), or as many
// as fill a vector.
template <Rounding R, class Src, class DLane = hn::Rebind<typename Src::Lane, D>>
struct Constants {
  using T = typename Src::Lane;
  using DL = DLane;
  using VL = hn::Vec<DL>;
  static constexpr int kLaneBits = 8 * sizeof(T);

  explicit Constants(const ConvertPlan& plan)
      : m(plan.mantissa_bits),
        s(Src::kMantissa - m),
        min_field_value(plan.min_field - 127 + Src::kBias),
        min_field(Set(min_field_value)),
        normal_shift(Set(s)),
        shift_below_min_field(Set(s + min_field_value)),
        min_normal(Set(min_field_value << Src::kMantissa)),
        rebias(Set((min_field_value - 1) << Src::kMantissa)),
        normal_low_mask(Set((1u << s) - 1)),
        normal_half_minus_one(Set((1u << (s - 1)) - 1)),
        normal_span(Set((plan.max_field - plan.min_field + 1) << Src::kMantissa)),
        max_finite(Set(plan.max_finite)),
        first_normal_minus_one(Set((1u << m) - 1)),
        sign_shift(std::countr_zero(plan.sign_bit)),
        overflow_positive(Set(saturates(plan, false) ? plan.max_finite : plan.overflow_code[0])),
        overflow_negative(Set(saturates(plan, true) ? plan.sign_bit | plan.max_finite : plan.overflow_code[1])),
        tiny_positive(Set(tiny_below(plan, false))),
        tiny_negative(Set(tiny_below(plan, true))),
        overflow_signed(hn::GetLane(overflow_negative) == (plan.sign_bit | hn::GetLane(overflow_positive)) &&
                        (hn::GetLane(overflow_positive) & plan.sign_bit) == 0) {}

  VL Set(std::uint32_t value) const { return hn::Set(d, static_cast<T>(value)); }

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
  // and sign alone. Magnitudes (source bits) below this are tiny.
  std::uint32_t tiny_below(const ConvertPlan& plan, bool negative) const {
    const std::uint32_t min_normal_bits = min_field_value << Src::kMantissa;
    // The format's ulp at full precision in the binade below 2^emin, in
    // source codes: 2^s where that binade is one of the source's normal
    // ones, 2^(s-1) where it is the source's subnormal range (bf16 from
    // float32), whose codes are twice as wide.
    const std::uint32_t ulp = min_field_value == 1 ? 1u << (s - 1) : 1u << s;
    if (!plan.tiny_after) return min_normal_bits;
    switch (R) {
      case Rounding::rne:
      case Rounding::rna: return min_normal_bits - ulp / 2;  // the tie rounds up: to even 2^emin, or away
      case Rounding::rup: return negative ? min_normal_bits : min_normal_bits - ulp + 1;
      case Rounding::rdn: return negative ? min_normal_bits - ulp + 1 : min_normal_bits;
      default: return min_normal_bits;  // rtz and rto never round up to 2^emin; sr is decided per value
    }
  }

  const DL d;
  const std::uint32_t m;  // mantissa bits
  const std::uint32_t s;  // the shift from the source's mantissa to the format's
  const std::uint32_t min_field_value;  // the source's exponent field of 2^emin
  const VL zero = hn::Zero(d);
  const VL one = Set(1);
  const VL implicit_bit = Set(1u << Src::kMantissa);
  const VL max_shift = Set(Src::kMantissa + 2);  // any larger shift leaves the whole value below half an ulp
  const VL min_field, normal_shift, shift_below_min_field, min_normal, rebias, normal_low_mask,
      normal_half_minus_one;
  // From min_normal up to the top of the format's highest binade (any larger
  // value overflows): the lanes of the short path.
  const VL normal_span;
  const VL max_finite, first_normal_minus_one;
  const int sign_shift;
  const VL overflow_positive, overflow_negative, tiny_positive, tiny_negative;
  // The negative overflow code is the positive one with the sign bit (the
  // sign can then be or-ed in after the choice).
  const bool overflow_signed;
};

// The steps after rounding, shared by every route: overflow, tininess,
// ftz/daz and the flag tallies. code is the rounded magnitude code with
// unbounded exponent (above max finite where the value overflows), inexact
// whether rounding lost anything. Returns the code after flushing; sets
// *overflow.
//   kNoneTiny: no lane lies below the lowest binade, so none is tiny,
//     subnormal, flushed or zero.
template <Rounding R, bool kFlush, bool kNoneTiny, class K, class VL = typename K::VL,
          class ML = hn::Mask<typename K::DL>>
HWY_INLINE VL TallyFlags(const ConvertPlan& plan, const K& k, VL u, VL a, VL code, ML inexact, ML subnormal_input,
                         V r, auto& tally, ML* overflow_out) {
  const typename K::DL d;
  const ML negative = u != a;
  constexpr bool kDirected = R == Rounding::rup || R == Rounding::rdn;
  const ML overflow = code > k.max_finite;
  *overflow_out = overflow;
  ML inexact_flag = hn::Or(inexact, overflow);
  if constexpr (!kNoneTiny) {
    ML tiny = a < k.tiny_positive;
    if constexpr (R == Rounding::sr) {
      if (plan.tiny_after) {
        // The draw decides whether the top of the binade below 2^emin
        // rounds up to 2^emin at full precision.
        // (Rare lanes: the draw is consulted only when a vector has one.)
        const VL top = hn::ShiftRightSame(a, static_cast<int>(k.s));
        const ML at_top = top + k.one == hn::ShiftRightSame(k.min_normal, static_cast<int>(k.s));
        if (HWY_UNLIKELY(!hn::AllFalse(d, at_top))) {
          const ML reaches = RoundAway<R>(d, top, a & k.normal_low_mask, k.normal_half_minus_one, k.normal_shift,
                                          negative, r, plan.random_bit_count);
          tiny = hn::AndNot(hn::And(at_top, reaches), tiny);
        }
      }
    } else if constexpr (kDirected) {
      tiny = a < hn::IfThenElse(negative, k.tiny_negative, k.tiny_positive);
    }
    ML underflow = hn::And(tiny, inexact);
    if constexpr (kFlush) {
      ML tiny_to_zero = hn::AndNot(a == k.zero, code == k.zero);
      // The core's order: daz, then overflow, then ftz.
      const ML daz = hn::And(subnormal_input, MaskIf(d, plan.flush_inputs));
      const ML ftz = hn::AndNot(hn::Or(daz, a == k.zero), hn::And(tiny, MaskIf(d, plan.flush_results)));
      const ML flushed = hn::Or(daz, ftz);
      code = hn::IfThenZeroElse(flushed, code);
      inexact_flag = hn::AndNot(daz, hn::Or(inexact_flag, ftz));
      underflow = hn::AndNot(daz, hn::Or(underflow, ftz));
      tiny_to_zero = hn::Or(tiny_to_zero, flushed);
      tally[kFlushed] += hn::CountTrue(d, flushed);
      tally[kTinyToZero] += hn::CountTrue(d, tiny_to_zero);
    } else {
      // A zero input always gives code 0: the rest of the zeros are tiny.
      tally[kTinyToZero] += hn::CountTrue(d, hn::AndNot(a == k.zero, code == k.zero));
    }
    tally[kUnderflow] += hn::CountTrue(d, underflow);
    // Nonzero codes below the first normal (overflowed codes are above).
    tally[kSubnormal] += hn::CountTrue(d, (code - k.one) < k.first_normal_minus_one);
  }
  tally[kInexact] += hn::CountTrue(d, inexact_flag);
  tally[kOverflow] += hn::CountTrue(d, overflow);
  if constexpr (kDirected) tally[kNegativeOverflow] += hn::CountTrue(d, hn::And(overflow, negative));
  return code;
}

// The code with its sign, or the policy's overflow code.
template <Rounding R, bool kNoneTiny, class K, class VL = typename K::VL, class ML = hn::Mask<typename K::DL>>
HWY_INLINE VL SignAndOverflow(const ConvertPlan& plan, const K& k, VL u, VL a, VL code, ML overflow) {
  // Only the directed modes (and an asymmetric overflow code) need the sign
  // as a mask; the compiler drops it from the others.
  constexpr bool kDirected = R == Rounding::rup || R == Rounding::rdn;
  VL sign = hn::ShiftLeftSame(hn::ShiftRight<K::kLaneBits - 1>(u), k.sign_shift);
  if (!kNoneTiny && !plan.negative_zero) sign = hn::IfThenZeroElse(code == k.zero, sign);
  if (!kDirected && k.overflow_signed) return hn::IfThenElse(overflow, k.overflow_positive, code) | sign;
  return hn::IfThenElse(overflow, hn::IfThenElse(u != a, k.overflow_negative, k.overflow_positive), code | sign);
}

template <Rounding R, bool kFlush, bool kNoneTiny, class K, class VL = typename K::VL,
          class ML = hn::Mask<typename K::DL>>
HWY_INLINE VL FinishVector(const ConvertPlan& plan, const K& k, VL u, VL a, VL code, ML inexact, ML subnormal_input,
                           V r, auto& tally) {
  ML overflow;
  code = TallyFlags<R, kFlush, kNoneTiny>(plan, k, u, a, code, inexact, subnormal_input, r, tally, &overflow);
  return SignAndOverflow<R, kNoneTiny>(plan, k, u, a, code, overflow);
}

// One vector of values, none of them NaN or infinite, rounded in software.
//   kFixedShift: the code is the rebiased source bits shifted by a constant,
//     true where every lane lies at or above the format's lowest binade, and
//     for every lane where that binade is the source's lowest (the format's
//     subnormals are then the source's, shifted).
//   kNoneTiny: as FinishVector.
template <Rounding R, bool kFlush, bool kFixedShift, bool kNoneTiny, class Src, class K = Constants<R, Src>,
          class VL = typename K::VL, class ML = hn::Mask<typename K::DL>>
HWY_INLINE VL ConvertVector(const ConvertPlan& plan, const K& k, VL u, VL a, ML subnormal_input, V r,
                            auto& tally) {
  const typename K::DL d;
  constexpr int kMantissa = Src::kMantissa;
  VL source, shift, clamped_shift, low_mask;
  if constexpr (kFixedShift) {
    source = a - k.rebias;
    shift = clamped_shift = k.normal_shift;
    low_mask = k.normal_low_mask;
  } else {
    // The exact value as source * 2^-shift in units of the format's ulp:
    // at or above the lowest binade the rebiased source bits (exponent
    // field and mantissa), below it the significand shifted one
    // more per binade, so that codes below 2^emin are subnormal.
    // Source subnormals (field 0) share field 1's binade without its
    // implicit bit; every binade below 2^emin adds one to the shift.
    const VL binade = hn::Min(hn::Max(hn::ShiftRight<kMantissa>(a), k.one), k.min_field);
    shift = k.shift_below_min_field - binade;
    clamped_shift = hn::Min(shift, k.max_shift);
    // Field f >= min_field keeps f - min_field + 1, below it 1 (the implicit
    // bit) or 0 (a source subnormal).
    source = a + k.implicit_bit - hn::ShiftLeft<kMantissa>(binade);
    low_mask = (k.one << clamped_shift) - k.one;
  }
  const VL kept = kFixedShift ? hn::ShiftRightSame(source, static_cast<int>(k.s)) : source >> clamped_shift;
  const VL rem = source & low_mask;
  const ML away = RoundAway<R>(d, kept, rem, hn::ShiftRight<1>(low_mask), shift, u != a, r, plan.random_bit_count);
  const VL code = kept - hn::VecFromMask(d, away);
  return FinishVector<R, kFlush, kNoneTiny>(plan, k, u, a, code, rem != k.zero, subnormal_input, r, tally);
}

// ConvertVector in its cheapest form for these lanes: the short path where
// all lie in the format's binades, the constant shift where the format's
// lowest binade is the source's.
template <Rounding R, bool kFlush, class Src, class K, class VL = typename K::VL, class ML = hn::Mask<typename K::DL>>
HWY_INLINE VL RoundVector(const ConvertPlan& plan, const K& k, VL u, VL a, ML subnormal_input, V r, auto& tally) {
  const typename K::DL d;
  if (hn::AllTrue(d, (a - k.min_normal) < k.normal_span)) {
    return ConvertVector<R, kFlush, true, true, Src, K>(plan, k, u, a, subnormal_input, r, tally);
  }
  if (k.min_field_value == 1) {
    return ConvertVector<R, kFlush, true, false, Src, K>(plan, k, u, a, subnormal_input, r, tally);
  }
  return ConvertVector<R, kFlush, false, false, Src, K>(plan, k, u, a, subnormal_input, r, tally);
}

// Float32 subnormals among magnitudes a.
HWY_INLINE M Float32Subnormal(V a) {
  const D d;
  return hn::AndNot(a == hn::Zero(d), a < hn::Set(d, 0x00800000u));
}

// Magnitudes a whose float32 exponent field is 0 (zeros and subnormals) or
// 255 (infinities and NaNs): field - 1 wraps or reaches 254.
HWY_INLINE M FieldZeroOrAllOnes(V a) {
  const D d;
  return (hn::ShiftRight<23>(a) - hn::Set(d, 1u)) > hn::Set(d, 253u);
}

using DH = hn::Rebind<std::uint16_t, D>;  // a 16-bit lane per input value
using VH = hn::Vec<DH>;

// Float32 bits x narrowed to fp16 by the CPU's own vcvtps2ph (F16C, every
// AVX2 and AVX-512 target), with the rounding direction in its immediate,
// so MXCSR.RC cannot change it (and FTZ does not apply to it; DAZ may, see
// ConvertKernel).
template <int kImmediate>
HWY_INLINE VH HardwareFp16(V x) {
  constexpr int kMode = kImmediate | _MM_FROUND_NO_EXC;
#if HWY_TARGET <= HWY_AVX3
  return VH{_mm512_cvtps_ph(_mm512_castsi512_ps(x.raw), kMode)};
#else
  return VH{_mm256_cvtps_ph(_mm256_castsi256_ps(x.raw), kMode)};
#endif
}

// Magnitudes a (float32 bits, finite) narrowed to fp16 by round-to-odd:
// truncated, with the last bit set where truncating lost anything, which is
// where truncating and rounding up differ (by one code; above fp16's range
// they give max finite and infinity). Rounding the result to a format with
// at least two fewer bits, in any deterministic mode, gives what rounding a
// gives (round-to-odd's double-rounding property).
HWY_INLINE VH NarrowToOddFp16(V a) {
  const VH down = HardwareFp16<_MM_FROUND_TO_ZERO>(a);
  return down | (HardwareFp16<_MM_FROUND_TO_POS_INF>(a) - down);
}

// fp32 -> fp16 by vcvtps2ph: the immediate gives rne, rtz, rup and rdn of
// the signed value, and rto is NarrowToOddFp16. Its results equal the
// core's on every finite input (proven in tests/batch, also under
// MXCSR.DAZ). The code becomes the core's unbounded one (every magnitude
// from 2^16 up overflows, whatever the hardware saturated to), and the
// shared steps do the rest: overflow and sat, tininess, ftz/daz, the flags
// and the sign.
template <Rounding R, bool kFlush, bool kNoneTiny>
HWY_INLINE VH ConvertVectorF16c(const ConvertPlan& plan, const Constants<R, Float32Bits>& k, V u, V a,
                               M subnormal_input, Tallies& tally) {
  const D d;
  VH magnitude, hardware;  // hardware: the signed result, where the immediate has the mode
  if constexpr (R == Rounding::rto) {
    magnitude = NarrowToOddFp16(a);
  } else {
    constexpr int kMode = R == Rounding::rne   ? _MM_FROUND_TO_NEAREST_INT
                          : R == Rounding::rtz ? _MM_FROUND_TO_ZERO
                          : R == Rounding::rup ? _MM_FROUND_TO_POS_INF
                                               : _MM_FROUND_TO_NEG_INF;
    hardware = HardwareFp16<kMode>(u);
    magnitude = hardware & hn::Set(DH(), 0x7FFF);
  }
  // Inexact iff the code does not widen back to a (vcvtph2ps is exact).
  const auto widened = hn::PromoteTo(hn::Rebind<float, D>(), hn::BitCast(hn::Rebind<hwy::float16_t, D>(), magnitude));
  const M inexact = hn::BitCast(d, widened) != a;
  const V too_large = hn::Set(d, 0x7C00u);  // the unbounded code of every magnitude from 2^16 up
  V code = hn::IfThenElse(AtLeast(a, hn::Set(d, 0x47800000u)), too_large, hn::PromoteTo(d, magnitude));
  M overflow;
  code = TallyFlags<R, kFlush, kNoneTiny>(plan, k, u, a, code, inexact, subnormal_input, k.zero, tally, &overflow);
  // Without flushing or saturation, the signed hardware result is the
  // core's: infinity where it overflows, max finite where the mode rounds
  // toward zero.
  if (!kFlush && R != Rounding::rto && !plan.saturate_always) return hardware;
  const hn::Rebind<std::int32_t, D> di;  // codes fit 16 bits: the signed demotion keeps them
  return hn::DemoteTo(DH(), hn::BitCast(di, SignAndOverflow<R, kNoneTiny>(plan, k, u, a, code, overflow)));
}

// Float32 bits u0 and u1 (finite) narrowed to bf16 by round-to-odd, in one
// vector of 16-bit lanes (u0's values first): each value's top half
// (truncation: sign, exponent and 7 mantissa bits), with the last bit set
// where the bottom half was not zero. Rounding the result to a format with
// at least two fewer mantissa bits, in any deterministic mode, gives what
// rounding the float32 value gives (round-to-odd's double-rounding
// property); bf16 has float32's exponent range, so nothing overflows or
// leaves the normal range before the format does (plan.via_bf16 checks the
// format's side). Integer operations only: MXCSR does not touch them.
template <class DW>
HWY_INLINE hn::Vec<DW> NarrowToOddBf16(DW dw, V u0, V u1) {
  const auto top = hn::ConcatOdd(dw, hn::BitCast(dw, u1), hn::BitCast(dw, u0));
  const auto bottom = hn::ConcatEven(dw, hn::BitCast(dw, u1), hn::BitCast(dw, u0));
  return top | hn::Min(bottom, hn::Set(dw, 1));
}

// The 8-bit route through bf16 (plan.via_bf16), two vectors of inputs at a
// time: their bf16 narrowings fill one whole vector of 16-bit lanes, so the
// rounding to the format runs on full vectors (a vector's worth of inputs
// fills only half of one). Returns where it stopped: the caller's loop
// takes the remaining inputs, fewer than two vectors, on the float32 route.
//   kFlush: the policy flushes (ftz or daz). Float32 subnormal inputs go to
//     the core, so daz has nothing left to flush here, and ftz flushes the
//     tiny results of the 16-bit lanes.
template <Rounding R, bool kFlush, typename Out>
std::size_t ConvertPairsViaBf16(const ConvertPlan& caller_plan, const float* in, std::size_t n, Out* out,
                                const RandomStream* stream, FlagCounts* counts, Tallies& tally,
                                std::uint64_t* served) {
  const ConvertPlan plan = caller_plan;  // not reloaded after every 8-bit store (see ConvertKernel)
  std::uint64_t served_here = 0;
  const D d;
  const hn::Rebind<float, D> df;
  using DW = hn::Repartition<std::uint16_t, D>;  // 16-bit lanes, a whole vector of them
  const DW dw;
  const hn::Repartition<std::int16_t, D> dw_signed;
  const hn::Rebind<Out, DW> dout;
  const Constants<R, Bf16Bits, DW> k(plan);
  const std::size_t lanes = hn::Lanes(d);
  const V max_finite_float = hn::Set(d, 0x7F7FFFFFu);
  const bool subnormals_to_core = plan.subnormal_inputs_to_core || plan.flush_inputs;
  const auto no_flush = MaskIf(dw, false);
  // Counted here and added to the caller's at the end: the caller's array
  // could be aliased by the 8-bit stores, so every count would go through
  // memory (measured: the loop's bottleneck).
  SpreadTallies mine;
  std::size_t i = 0;
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    const V u0 = hn::BitCast(d, hn::LoadU(df, in + i));
    const V u1 = hn::BitCast(d, hn::LoadU(df, in + i + lanes));
    const V a0 = u0 & hn::Set(d, 0x7FFFFFFFu);
    const V a1 = u1 & hn::Set(d, 0x7FFFFFFFu);
    // Infinities and NaNs, and float32 subnormals where they must go to the
    // core (see ConvertKernel): both vectors then go to the core.
    M to_core = hn::Or(a0 > max_finite_float, a1 > max_finite_float);
    if (subnormals_to_core) to_core = hn::Or(to_core, hn::Or(Float32Subnormal(a0), Float32Subnormal(a1)));
    if (HWY_UNLIKELY(!hn::AllFalse(d, to_core))) {
      convert_with_core(plan, in + i, 2 * lanes, out + i, stream, i, counts);
      continue;
    }
    served_here += 2 * lanes;
    const auto u16 = NarrowToOddBf16(dw, u0, u1);
    const auto a16 = u16 & hn::Set(dw, 0x7FFF);
    const auto bits = RoundVector<R, kFlush, Bf16Bits>(plan, k, u16, a16, no_flush, hn::Zero(d), mine);
    hn::StoreU(hn::DemoteTo(dout, hn::BitCast(dw_signed, bits)), dout, out + i);
  }
  for (int t = 0; t < kTallies; ++t) tally[t] += mine[t];
  *served += served_here;
  return i;
}

// kFlush: the policy flushes inputs (daz) or results (ftz).
template <Rounding R, bool kFlush, typename Out>
void ConvertKernel(const ConvertPlan& caller_plan, const float* in, std::size_t n, Out* out,
                   const RandomStream* caller_stream, FlagCounts* counts) {
  // Copies the loop reads from: the caller's could be aliased by the 8-bit
  // stores (a char type may alias anything), so every vector reloaded the
  // plan's fields and the stream and rebuilt what depends on them.
  const ConvertPlan plan = caller_plan;
  const RandomStream stream_copy = caller_stream != nullptr ? *caller_stream : RandomStream{};
  const RandomStream* const stream = caller_stream != nullptr ? &stream_copy : nullptr;
  const D d;
  const hn::Rebind<float, D> df;
  const hn::Rebind<std::int32_t, D> di;
  const hn::Rebind<Out, D> dout;
  const std::size_t lanes = hn::Lanes(d);
  const Constants<R, Float32Bits> k(plan);
  const V max_finite_float = hn::Set(d, 0x7F7FFFFFu);
  // fp16 in the modes vcvtps2ph has (plan.hardware_fp16).
  constexpr bool kCanF16c = R != Rounding::sr && R != Rounding::rna && sizeof(Out) == 2;
  const bool f16c = kCanF16c && plan.hardware_fp16;
  // 8-bit formats in deterministic modes: narrow to bf16 first, then round
  // 16-bit lanes, two vectors at a time (ConvertPairsViaBf16).
  constexpr bool kCanViaBf16 = R != Rounding::sr && sizeof(Out) == 1;
  const bool via_bf16 = kCanViaBf16 && plan.via_bf16;
  // vcvtps2ph reads a float32 subnormal as zero under MXCSR.DAZ (measured;
  // the manual exempts only vcvtph2ps): while the caller's MXCSR has it,
  // vectors holding one go to the core.
  const bool hardware_daz = f16c && !plan.flush_inputs && (_mm_getcsr() & _MM_DENORMALS_ZERO_ON) != 0;

  std::size_t i = 0;
  std::uint64_t served = 0;
  Tallies tally = {};
  if constexpr (kCanViaBf16) {
    if (via_bf16 && n >= 2 * lanes) {
      i = ConvertPairsViaBf16<R, kFlush>(plan, in, n, out, stream, counts, tally, &served);
    }
  }
  for (; i + lanes <= n; i += lanes) {
    const V u = hn::BitCast(d, hn::LoadU(df, in + i));
    const V a = u & hn::Set(d, 0x7FFFFFFFu);
    M to_core = a > max_finite_float;  // infinities and NaNs
    M subnormal_input = MaskIf(d, false);
    if (kFlush || plan.subnormal_inputs_to_core || hardware_daz) {
      subnormal_input = Float32Subnormal(a);
      if (plan.subnormal_inputs_to_core || hardware_daz) to_core = hn::Or(to_core, subnormal_input);
    }
    if (HWY_UNLIKELY(!hn::AllFalse(d, to_core))) {
      convert_with_core(plan, in + i, lanes, out + i, stream, i, counts);
      continue;
    }
    served += lanes;
    if (kCanF16c && f16c) {
      if constexpr (kCanF16c) {
        const bool none_tiny = hn::AllTrue(d, (a - k.min_normal) < k.normal_span);
        const VH bits = none_tiny ? ConvertVectorF16c<R, kFlush, true>(plan, k, u, a, subnormal_input, tally)
                                  : ConvertVectorF16c<R, kFlush, false>(plan, k, u, a, subnormal_input, tally);
        hn::StoreU(bits, DH(), out + i);
      }
      continue;
    }
    const V r = R == Rounding::sr ? Draws(d, *stream, i) : k.zero;
    const V bits = RoundVector<R, kFlush, Float32Bits>(plan, k, u, a, subnormal_input, r, tally);
    if constexpr (sizeof(Out) == 4) {
      hn::StoreU(hn::ShiftLeftSame(bits, static_cast<int>(plan.pad_bits)), dout, out + i);  // tf32: code << 13
    } else {
      hn::StoreU(hn::DemoteTo(dout, hn::BitCast(di, bits)), dout, out + i);
    }
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

#include "batch/convert_exact-inl.h"
#include "batch/convert_power_of_two-inl.h"

// The route of a rounding mode: E8M0's own, or the rounding one.
template <Rounding R, typename Out>
void ConvertRounded(const ConvertPlan& plan, const float* in, std::size_t n, Out* out, const RandomStream* stream,
                    FlagCounts* counts) {
  if constexpr (sizeof(Out) == 1) {
    if (plan.route == Route::power_of_two) return ConvertPowerOfTwo<R>(plan, in, n, out, stream, counts);
  }
  ConvertKernel<R>(plan, in, n, out, stream, counts);
}

template <typename Out>
void ConvertTo(const ConvertPlan& plan, const float* in, std::size_t n, Out* out, const RandomStream* stream,
               FlagCounts* counts) {
  switch (plan.policy->rounding) {
    case Rounding::rne: return ConvertRounded<Rounding::rne>(plan, in, n, out, stream, counts);
    case Rounding::rna: return ConvertRounded<Rounding::rna>(plan, in, n, out, stream, counts);
    case Rounding::rtz: return ConvertRounded<Rounding::rtz>(plan, in, n, out, stream, counts);
    case Rounding::rup: return ConvertRounded<Rounding::rup>(plan, in, n, out, stream, counts);
    case Rounding::rdn: return ConvertRounded<Rounding::rdn>(plan, in, n, out, stream, counts);
    case Rounding::rto: return ConvertRounded<Rounding::rto>(plan, in, n, out, stream, counts);
    case Rounding::sr: return ConvertRounded<Rounding::sr>(plan, in, n, out, stream, counts);
    case Rounding::sr_rne:
    case Rounding::sr_rna:
    case Rounding::sr_rno: break;  // no proven pair: make_convert_plan gives none
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
void ConvertToU32(const ConvertPlan& plan, const float* in, std::size_t n, std::uint32_t* out,
                  const RandomStream* stream, FlagCounts* counts) {
  if (plan.route == Route::exact) return ConvertExact(plan, in, n, out, counts);
  ConvertTo(plan, in, n, out, stream, counts);
}
// Only fp64 has a 64-bit container.
void ConvertToU64(const ConvertPlan& plan, const float* in, std::size_t n, std::uint64_t* out,
                  const RandomStream*, FlagCounts* counts) {
  ConvertExact(plan, in, n, out, counts);
}

}  // namespace HWY_NAMESPACE
}  // namespace fmtcheck::detail
HWY_AFTER_NAMESPACE();
#endif  // HWY_TARGET <= HWY_AVX2

#if HWY_ONCE
namespace fmtcheck::detail {
namespace {

// The targets the kernel is compiled for, best first, as Highway's
// HWY_CHOOSE_* give them (nullptr for one the compiler could not build).
#define FMTCHECK_KERNEL_TARGET(NAME)                                                                \
  KernelTarget {                                                                                    \
    HWY_##NAME, HWY_CHOOSE_##NAME(ConvertToU8), HWY_CHOOSE_##NAME(ConvertToU16),                    \
        HWY_CHOOSE_##NAME(ConvertToU32), HWY_CHOOSE_##NAME(ConvertToU64)                            \
  }
const KernelTarget kCompiledTargets[] = {FMTCHECK_KERNEL_TARGET(AVX3), FMTCHECK_KERNEL_TARGET(AVX2)};
#undef FMTCHECK_KERNEL_TARGET

// Whether this CPU runs the target (hwy::SupportedTargets, which tests may
// narrow with SetSupportedTargetsForTest).
bool runs_here(const KernelTarget& t) { return t.to_u8 != nullptr && (hwy::SupportedTargets() & t.target) != 0; }

// The kernel draws from even stream positions (two draws per generator
// output): a batch starting at an odd one gives its first value to the core.
template <typename Out, typename Kernel>
void from_even_position(Kernel kernel, const ConvertPlan& plan, const float* in, std::size_t n, Out* out,
                        const RandomStream* stream, FlagCounts* counts) {
  if (stream != nullptr && stream->first % 2 != 0 && n > 0) {
    convert_with_core(plan, in, 1, out, stream, 0, counts);
    const RandomStream rest{stream->seed, stream->first + 1};
    return kernel(plan, in + 1, n - 1, out + 1, &rest, counts);
  }
  kernel(plan, in, n, out, stream, counts);
}

}  // namespace

std::vector<KernelTarget> kernel_targets() {
  std::vector<KernelTarget> runnable;
  for (const KernelTarget& t : kCompiledTargets) {
    if (runs_here(t)) runnable.push_back(t);
  }
  return runnable;
}

const KernelTarget* best_kernel_target() {
  for (const KernelTarget& t : kCompiledTargets) {
    if (runs_here(t)) return &t;
  }
  return nullptr;
}

void convert_float32_fast(const KernelTarget& target, const ConvertPlan& plan, const float* in, std::size_t n,
                          std::uint8_t* out, const RandomStream* stream, FlagCounts* counts) {
  from_even_position(target.to_u8, plan, in, n, out, stream, counts);
}
void convert_float32_fast(const KernelTarget& target, const ConvertPlan& plan, const float* in, std::size_t n,
                          std::uint16_t* out, const RandomStream* stream, FlagCounts* counts) {
  from_even_position(target.to_u16, plan, in, n, out, stream, counts);
}
void convert_float32_fast(const KernelTarget& target, const ConvertPlan& plan, const float* in, std::size_t n,
                          std::uint32_t* out, const RandomStream* stream, FlagCounts* counts) {
  from_even_position(target.to_u32, plan, in, n, out, stream, counts);
}
void convert_float32_fast(const KernelTarget& target, const ConvertPlan& plan, const float* in, std::size_t n,
                          std::uint64_t* out, const RandomStream* stream, FlagCounts* counts) {
  from_even_position(target.to_u64, plan, in, n, out, stream, counts);
}

}  // namespace fmtcheck::detail
#endif
