// The SIMD decode of fp16 and bf16 (see batch_decode_fast.hpp). Both
// widenings are exact for every non-NaN code and keep a NaN's payload,
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

std::size_t DecodeFp16(const std::uint16_t* in, std::size_t n, float* out) {
#if HWY_TARGET <= HWY_AVX2
  // AVX2 and above imply F16C: PromoteTo is vcvtph2ps.
  const D d;
  const DF df;
  const D16 d16;
  const hn::Rebind<hwy::float16_t, D> dh;
  const std::size_t lanes = hn::Lanes(d);
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const V bits = hn::BitCast(d, hn::PromoteTo(df, hn::BitCast(dh, hn::LoadU(d16, in + i))));
    hn::StoreU(hn::BitCast(df, CanonicalNaN(d, bits)), df, out + i);
  }
  return i;
#else
  (void)in;
  (void)n;
  (void)out;
  return 0;
#endif
}

}  // namespace HWY_NAMESPACE
}  // namespace fmtcheck::detail
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace fmtcheck::detail {

HWY_EXPORT(DecodeFp16);
HWY_EXPORT(DecodeBf16);

std::size_t decode_fp16_fast(const std::uint16_t* in, std::size_t n, float* out) {
  return HWY_DYNAMIC_DISPATCH(DecodeFp16)(in, n, out);
}
std::size_t decode_bf16_fast(const std::uint16_t* in, std::size_t n, float* out) {
  return HWY_DYNAMIC_DISPATCH(DecodeBf16)(in, n, out);
}

}  // namespace fmtcheck::detail
#endif
