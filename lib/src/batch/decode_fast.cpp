// The SIMD decode of fp16, bf16, the 8-bit formats and float32 containers
// (see decode_fast.hpp).
// The widenings are exact for every non-NaN code and keep a NaN's payload,
// while the scalar decode gives every NaN code float32's canonical quiet
// NaN with the code's sign; NaN lanes are rewritten to that.
//
// Highway compiles this file once per x86-64 level (foreach_target.h) and
// HWY_DYNAMIC_DISPATCH picks the best one the CPU has.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "batch/decode_fast.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <cmath>

#include "batch/decode_fast.hpp"

HWY_BEFORE_NAMESPACE();
namespace fmtcheck::detail {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using D = hn::ScalableTag<std::uint32_t>;
using V = hn::Vec<D>;
using DF = hn::Rebind<float, D>;
using D16 = hn::Rebind<std::uint16_t, D>;  // one code per 32-bit lane

// float32 bits with every NaN made sign | 0x7FC00000, as
// static_cast<float>(to_double(...)) gives. Integer compares: no FP
// exception, nothing that MXCSR changes.
HWY_INLINE V CanonicalNaN(D d, V bits) {
  const V sign = hn::Set(d, 0x80000000u);
  const auto nan = hn::AndNot(sign, bits) > hn::Set(d, 0x7F800000u);
  return hn::IfThenElse(nan, hn::Or(hn::And(bits, sign), hn::Set(d, 0x7FC00000u)), bits);
}

std::size_t DecodeBf16(const std::uint16_t* in, std::size_t n, float* out) {
  const D d;
  const DF df;
  const D16 d16;
  const std::size_t lanes = hn::Lanes(d);
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const V bits = hn::ShiftLeft<16>(hn::PromoteTo(d, hn::LoadU(d16, in + i)));
    hn::StoreU(hn::BitCast(df, CanonicalNaN(d, bits)), df, out + i);
  }
  return i;
}

// fp16 by vcvtph2ps, which AVX2 and above imply (F16C); NaN lanes made the
// scalar decode's.
std::size_t DecodeFp16(const std::uint16_t* in, std::size_t n, float* out) {
#if HWY_TARGET <= HWY_AVX2
  const D d;
  const DF df;
  const hn::Rebind<hwy::float16_t, D> dh;
  const std::size_t lanes = hn::Lanes(d);
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto widened = hn::PromoteTo(df, hn::BitCast(dh, hn::LoadU(D16(), in + i)));
    hn::StoreU(hn::BitCast(df, CanonicalNaN(d, hn::BitCast(d, widened))), df, out + i);
  }
  return i;
#else
  (void)in;
  (void)n;
  (void)out;
  return 0;
#endif
}

// An 8-bit code by integer arithmetic on float32's fields (see
// SmallFloatDecode): a normal code's magnitude moved into float32's
// exponent and mantissa fields and rebiased, a subnormal's mantissa (an
// integer, exact in float32) times the spacing of the lowest binade, a
// power of two whose products are float32 normals. No table lookup and no
// floating-point input that MXCSR's DAZ could flush.
std::size_t DecodeSmallFloat(const SmallFloatDecode& k, const std::uint8_t* in, std::size_t n, float* out) {
  const D d;
  const DF df;
  const hn::Rebind<std::int32_t, D> di;
  const hn::Rebind<std::uint8_t, D> d8;
  const V magnitude_mask = hn::Set(d, k.magnitude_mask);
  const V sign_bit = hn::Set(d, k.sign_bit);
  const V normal_offset = hn::Set(d, k.normal_offset);
  const V inf_magnitude = hn::Set(d, k.inf_magnitude);
  const V nan_above = hn::Set(d, k.nan_above);
  const V infinity = hn::Set(d, 0x7F800000u);
  const V quiet_nan = hn::Set(d, 0x7FC00000u);
  const auto scale = hn::Set(df, k.subnormal_scale);
  const int to_sign = static_cast<int>(k.sign_shift);
  const int mantissa_bits = static_cast<int>(k.mantissa_bits);
  const std::size_t lanes = hn::Lanes(d);
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const V code = hn::PromoteTo(d, hn::LoadU(d8, in + i));
    const V magnitude = hn::And(code, magnitude_mask);
    const V normal = hn::ShiftLeftSame(magnitude, 23 - mantissa_bits) + normal_offset;
    const V subnormal = hn::BitCast(d, hn::Mul(hn::ConvertTo(df, hn::BitCast(di, magnitude)), scale));
    V bits = hn::IfThenElse(hn::ShiftRightSame(magnitude, mantissa_bits) == hn::Zero(d), subnormal, normal);
    bits = hn::IfThenElse(magnitude == inf_magnitude, infinity, bits);
    bits = hn::IfThenElse(magnitude > nan_above, quiet_nan, bits);
    if (k.negative_zero_is_nan) bits = hn::IfThenElse(code == sign_bit, quiet_nan, bits);
    const V sign = hn::ShiftLeftSame(hn::And(code, sign_bit), to_sign);
    hn::StoreU(hn::BitCast(df, hn::Or(bits, sign)), df, out + i);
  }
  return i;
}

// tf32 and fp32 containers: the code's bits (padding cleared) are the
// float32, every NaN made the scalar decode's.
std::size_t DecodeFloat32(const std::uint32_t* in, std::size_t n, std::uint32_t code_mask, float* out) {
  const D d;
  const DF df;
  const V mask = hn::Set(d, code_mask);
  const std::size_t lanes = hn::Lanes(d);
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    hn::StoreU(hn::BitCast(df, CanonicalNaN(d, hn::And(hn::LoadU(d, in + i), mask))), df, out + i);
  }
  return i;
}

}  // namespace HWY_NAMESPACE
}  // namespace fmtcheck::detail
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace fmtcheck::detail {

HWY_EXPORT(DecodeFp16);
HWY_EXPORT(DecodeBf16);
HWY_EXPORT(DecodeSmallFloat);
HWY_EXPORT(DecodeFloat32);

std::size_t decode_fp16_fast(const std::uint16_t* in, std::size_t n, float* out) {
  return HWY_DYNAMIC_DISPATCH(DecodeFp16)(in, n, out);
}
std::size_t decode_bf16_fast(const std::uint16_t* in, std::size_t n, float* out) {
  return HWY_DYNAMIC_DISPATCH(DecodeBf16)(in, n, out);
}
std::size_t decode_small_float_fast(const SmallFloatDecode& k, const std::uint8_t* in, std::size_t n, float* out) {
  return HWY_DYNAMIC_DISPATCH(DecodeSmallFloat)(k, in, n, out);
}
std::size_t decode_float32_fast(const std::uint32_t* in, std::size_t n, std::uint32_t code_mask, float* out) {
  return HWY_DYNAMIC_DISPATCH(DecodeFloat32)(in, n, code_mask, out);
}

std::optional<SmallFloatDecode> small_float_decode(const Format& f) {
  const int m = f.mantissa_bits;
  // Every value a float32 and every subnormal's product a float32 normal:
  // the lowest binade at or above float32's, the top at or below it.
  if (f.storage_bits != 8 || f.pad_bits != 0 || !f.has_subnormals || f.exponent_bits < 1 || m > 7 ||
      f.min_exponent() < -126 || f.min_exponent() - m < -126 || f.max_exponent() > 127) {
    return std::nullopt;
  }
  SmallFloatDecode k;
  k.magnitude_mask = static_cast<std::uint32_t>(f.magnitude_mask());
  k.sign_bit = static_cast<std::uint32_t>(f.sign_bit());
  k.sign_shift = static_cast<std::uint32_t>(31 - f.exponent_bits - m);
  k.mantissa_bits = static_cast<std::uint32_t>(m);
  k.normal_offset = static_cast<std::uint32_t>(127 - f.bias) << 23;
  k.subnormal_scale = std::ldexp(1.0f, f.min_exponent() - m);
  switch (f.specials) {
    case Specials::ieee:
      k.inf_magnitude = static_cast<std::uint32_t>(f.infinity_code());
      k.nan_above = k.inf_magnitude;
      break;
    case Specials::fn: k.nan_above = k.magnitude_mask - 1; break;
    case Specials::fnuz: k.negative_zero_is_nan = true; break;
    case Specials::none: break;
  }
  if (f.extended) k.inf_magnitude = static_cast<std::uint32_t>(f.infinity_code());
  return k;
}

}  // namespace fmtcheck::detail
#endif
