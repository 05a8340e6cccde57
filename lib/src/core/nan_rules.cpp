// Which NaN a conversion produces, per convention. Every platform rule that
// fmtcheck knows is here and nowhere else.
//
//   ieee       quiet NaN keeping the sign and the payload's high bits: what
//              x86 F16C (vcvtps2ph) and IEEE 754's recommendation do.
//   cuda       NVIDIA's host conversions from float (cuda_fp16.h,
//              cuda_bf16.h, cuda_fp8.h, cuda_fp6.h): a NaN input becomes the
//              all-ones positive code (0x7FFF, 0x7F, 0x7FFFFFFF); a NaN the
//              conversion creates (E4M3 overflow without saturation) keeps
//              the input's sign (0xFF for -500); formats without NaN (FP6,
//              FP4) give +max finite. (cuda_fp8.h's double -> E5M2 path keeps
//              sign and payload instead; conversions from float, the common
//              case, are the convention.)
//   canonical  positive, quiet bit only (0x7E00 for fp16).
//
// Formats whose only NaN is fixed (fn: S.1...1, fnuz: 0x80) can differ only
// in the sign, and only for fn. For formats without NaN (MX FP6/FP4) the
// conversion is invalid and the stand-in is +max (cuda) or zero with the NaN's
// sign (ieee) or +0 (canonical).
#include "fmtcheck/core/nan_rules.hpp"

namespace fmtcheck {

std::uint64_t nan_code(const Format& f, NanConvention c, bool sign, std::uint64_t payload) {
  const std::uint64_t sign_bit = sign ? f.sign_bit() : 0;
  switch (f.specials) {
    case Specials::ieee: {
      const int m = f.mantissa_bits;
      const std::uint64_t quiet = std::uint64_t{1} << (m - 1);
      switch (c) {
        case NanConvention::ieee: return sign_bit | f.infinity_code() | quiet | (payload >> (64 - m));
        case NanConvention::cuda: return f.magnitude_mask();
        case NanConvention::canonical: return f.infinity_code() | quiet;
      }
      break;
    }
    case Specials::fn:
      return (c == NanConvention::ieee ? sign_bit : 0) | f.magnitude_mask();
    case Specials::fnuz:
      return f.sign_bit();
    case Specials::none:
      switch (c) {
        case NanConvention::ieee: return sign_bit;
        case NanConvention::cuda: return f.max_finite_code();
        case NanConvention::canonical: return 0;
      }
      break;
  }
  return 0;
}

std::uint64_t created_nan_code(const Format& f, NanConvention c, bool sign) {
  if (c == NanConvention::cuda && f.specials == Specials::fn) return (sign ? f.sign_bit() : 0) | f.magnitude_mask();
  return nan_code(f, c, sign, 0);
}

}  // namespace fmtcheck
