// The SIMD decode of fp16, bf16, E4M3 and E5M2 (see batch_decode_fast.hpp).
// The widenings are exact for every non-NaN code and keep a NaN's payload,
// while the scalar decode gives every NaN code float32's canonical quiet
// NaN with the code's sign; NaN lanes are rewritten to that.
//
// Highway compiles this file once per x86-64 level (foreach_target.h) and
// HWY_DYNAMIC_DISPATCH picks the best one the CPU has.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "batch_decode_fast.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "batch_decode_fast.hpp"

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

// fp16 and the OCP FP8 formats, all through fp16 (vcvtph2ps), whose grid
// holds every one of their values: E5M2 is fp16's top byte (same bias, two
// mantissa bits), and E4M3's magnitude shifted into fp16's exponent and
// mantissa fields is its value times 2^-8 in every binade, subnormals
// included (fp16's bias is 8 more, and its subnormal range reaches 2^-8
// times E4M3's); times 256, exact, it is the value. E4M3's NaN (magnitude
// 0x7F, which would read as 1.875) is set apart; fp16's and E5M2's NaNs
// are fp16 NaNs.
enum class ViaFp16 { fp16, e5m2, e4m3 };

template <ViaFp16 kFormat, typename Code>
std::size_t DecodeViaFp16(const Code* in, std::size_t n, float* out) {
#if HWY_TARGET <= HWY_AVX2
  // AVX2 and above imply F16C: PromoteTo is vcvtph2ps.
  const D d;
  const DF df;
  const D16 d16;
  const hn::Rebind<Code, D> dc;
  const hn::Rebind<hwy::float16_t, D> dh;
  const auto widen = [&](auto half) { return hn::PromoteTo(df, hn::BitCast(dh, half)); };
  const std::size_t lanes = hn::Lanes(d);
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto codes = hn::LoadU(dc, in + i);
    if constexpr (kFormat == ViaFp16::fp16) {
      hn::StoreU(hn::BitCast(df, CanonicalNaN(d, hn::BitCast(d, widen(codes)))), df, out + i);
    } else if constexpr (kFormat == ViaFp16::e5m2) {
      const auto half = hn::ShiftLeft<8>(hn::PromoteTo(d16, codes));
      hn::StoreU(hn::BitCast(df, CanonicalNaN(d, hn::BitCast(d, widen(half)))), df, out + i);
    } else {
      const auto code16 = hn::PromoteTo(d16, codes);
      const auto half = hn::Or(hn::ShiftLeft<8>(hn::And(code16, hn::Set(d16, 0x80))),
                               hn::ShiftLeft<7>(hn::And(code16, hn::Set(d16, 0x7F))));
      const auto value = hn::Mul(widen(half), hn::Set(df, 256.0f));
      const V code32 = hn::PromoteTo(d, codes);
      const auto nan = hn::And(code32, hn::Set(d, 0x7F)) == hn::Set(d, 0x7F);
      const V nan_bits = hn::Or(hn::ShiftLeft<24>(hn::And(code32, hn::Set(d, 0x80))), hn::Set(d, 0x7FC00000u));
      hn::StoreU(hn::BitCast(df, hn::IfThenElse(nan, nan_bits, hn::BitCast(d, value))), df, out + i);
    }
  }
  return i;
#else
  (void)in;
  (void)n;
  (void)out;
  return 0;
#endif
}

std::size_t DecodeFp16(const std::uint16_t* in, std::size_t n, float* out) {
  return DecodeViaFp16<ViaFp16::fp16>(in, n, out);
}
std::size_t DecodeE4m3(const std::uint8_t* in, std::size_t n, float* out) {
  return DecodeViaFp16<ViaFp16::e4m3>(in, n, out);
}
std::size_t DecodeE5m2(const std::uint8_t* in, std::size_t n, float* out) {
  return DecodeViaFp16<ViaFp16::e5m2>(in, n, out);
}

}  // namespace HWY_NAMESPACE
}  // namespace fmtcheck::detail
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace fmtcheck::detail {

HWY_EXPORT(DecodeFp16);
HWY_EXPORT(DecodeBf16);
HWY_EXPORT(DecodeE4m3);
HWY_EXPORT(DecodeE5m2);

std::size_t decode_fp16_fast(const std::uint16_t* in, std::size_t n, float* out) {
  return HWY_DYNAMIC_DISPATCH(DecodeFp16)(in, n, out);
}
std::size_t decode_bf16_fast(const std::uint16_t* in, std::size_t n, float* out) {
  return HWY_DYNAMIC_DISPATCH(DecodeBf16)(in, n, out);
}
std::size_t decode_e4m3_fast(const std::uint8_t* in, std::size_t n, float* out) {
  return HWY_DYNAMIC_DISPATCH(DecodeE4m3)(in, n, out);
}
std::size_t decode_e5m2_fast(const std::uint8_t* in, std::size_t n, float* out) {
  return HWY_DYNAMIC_DISPATCH(DecodeE5m2)(in, n, out);
}

}  // namespace fmtcheck::detail
#endif
