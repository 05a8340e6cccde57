// Which NaN a conversion or an operation produces, per convention. Every
// platform rule that fmtcheck knows is here and nowhere else.
//
//   ieee       quiet NaN keeping the sign and the payload's high bits: what
//              x86 F16C (vcvtps2ph) and IEEE 754's recommendation do; a NaN
//              a conversion creates keeps the input's sign, one an invalid
//              operation creates is x86's default NaN (negative, quiet).
//   x86        SSE/AVX/F16C (Intel SDM vol. 1 §4.8.3.5 and §4.8.3.7, table
//              4-7): as ieee, but every created NaN is the default NaN
//              "QNaN floating-point indefinite" (0xFE00, 0xFFC00000): sign
//              set, quiet bit only. Of two NaN operands, the first is kept.
//              Berkeley SoftFloat's 8086 and 8086-SSE specialisations.
//   arm        ARM with FPCR.DN = 0 (Arm ARM: FPConvertNaN, FPProcessNaNs,
//              FPDefaultNaN): a NaN input keeps sign and payload, quieted;
//              a signaling NaN operand wins over a quiet one; a created NaN
//              is the default NaN, positive (0x7E00, 0x7FC00000). SoftFloat's
//              ARM-VFPv2 specialisation.
//   canonical  positive, quiet bit only (0x7E00 for fp16): ARM with
//              FPCR.DN = 1, RISC-V (every NaN result is canonical), and
//              SoftFloat's ARM-VFPv2-defaultNaN and RISCV specialisations.
//   cuda       NVIDIA's host conversions from float (cuda_fp16.h,
//              cuda_bf16.h, cuda_fp8.h, cuda_fp6.h): a NaN input becomes the
//              all-ones positive code (0x7FFF, 0x7F, 0x7FFFFFFF); a NaN the
//              conversion creates (E4M3 overflow without saturation) keeps
//              the input's sign (0xFF for -500); formats without NaN (FP6,
//              FP4) give +max finite. (cuda_fp8.h's double -> E5M2 path keeps
//              sign and payload instead; conversions from float, the common
//              case, are the convention.)
//   numpy      numpy's float16 casts (npy_floatbits_to_halfbits,
//              npy_doublebits_to_halfbits): sign and the payload's high
//              bits kept as they are, not quieted (0x7F800001 -> 0x7C01);
//              a payload whose kept bits are all zero becomes 1 so the code
//              stays a NaN. numpy's arithmetic runs on x86: created NaNs are
//              negative.
//   ml_dtypes  ml_dtypes' casts: quiet, the input's sign, payload dropped
//              (0x7FC12345 -> bf16 0x7FC0); into MX FP6/FP4, which have no
//              NaN, the zero of the opposite sign (+NaN -> -0), as
//              ml_dtypes 0.5-0.6 give it.
//   torch      PyTorch's CPU casts from float32 (`x.to(dtype)`, torch 2.15 on
//              x86-64, measured on every float32 input by
//              tests/torch/test_casts_every_float32.py): fp16 as ieee (its
//              vectorised kernel is F16C's vcvtps2ph); bfloat16 0xFFFF for
//              every NaN, whatever its sign (cvtfp32_bf16 in ATen's
//              cpu/vec/vec512/vec512_bfloat16.h and vec256_16bit_float.h
//              sets NaN lanes to 0xffff); 8-bit IEEE-style formats such as
//              e5m2 the all-ones magnitude with the input's sign
//              (fp8e5m2_from_fp32_value, torch/headeronly/util/Float8_e5m2.h:
//              0x7F | sign); fn keeps the sign (0x7F / 0xFF); wider formats
//              as ieee. torch's arithmetic runs on the CPU's float32: created
//              NaNs are x86's negative default NaN. (torch's scalar path,
//              taken by 0-dim and strided tensors and under
//              ATEN_CPU_CAPABILITY=default, gives bfloat16 NaNs as 0x7FC0
//              instead, round_to_nearest_even in headeronly/util/BFloat16.h:
//              that is canonical.)
//
// Formats whose only NaN is fixed (fn: S.1...1, fnuz and P3109 signed:
// 0x80) can differ only in the sign, and only for fn. For formats without
// NaN (MX FP6/FP4) the conversion is invalid and the stand-in is +max
// (cuda), zero with the NaN's sign (ieee, x86, arm, numpy), the opposite
// zero (ml_dtypes) or +0 (canonical); torch has no cast into them and
// takes ieee's.
#pragma once

#include <cstdint>

#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/host_device.hpp"
#include "fmtcheck/core/policy.hpp"

namespace fmtcheck {
namespace detail {

// Whether a convention keeps a NaN input's sign.
FMTCHECK_HD inline bool keeps_sign(NanConvention c) { return c != NanConvention::cuda && c != NanConvention::canonical; }


}  // namespace detail

// The code (no padding) a NaN input becomes. payload is the source NaN's
// mantissa left-aligned at bit 63. For a format without NaN (MX FP6/FP4),
// the code that stands in for it (the list above gives it per convention).
FMTCHECK_HD inline std::uint64_t nan_code(const Encoding& f, NanConvention c, bool sign, std::uint64_t payload) {
  const std::uint64_t sign_bit = sign && detail::keeps_sign(c) ? f.sign_bit() : 0;
  switch (f.specials) {
    case Specials::ieee: {
      const int m = f.mantissa_bits;
      const std::uint64_t quiet = std::uint64_t{1} << (m - 1);
      const std::uint64_t kept = payload >> (64 - m);
      switch (c) {
        case NanConvention::ieee:
        case NanConvention::x86:
        case NanConvention::arm: return sign_bit | f.infinity_code() | quiet | kept;
        case NanConvention::numpy: return sign_bit | f.infinity_code() | (kept == 0 ? 1 : kept);
        case NanConvention::ml_dtypes: return sign_bit | f.infinity_code() | quiet;
        case NanConvention::cuda: return f.magnitude_mask();
        case NanConvention::canonical: return f.infinity_code() | quiet;
        case NanConvention::torch:
          if (f == encodings::bf16()) return f.sign_bit() | f.magnitude_mask();
          if (f.storage_bits == 8) return sign_bit | f.magnitude_mask();
          return sign_bit | f.infinity_code() | quiet | kept;
      }
      break;
    }
    case Specials::fn:
      return sign_bit | f.magnitude_mask();
    case Specials::fnuz:
      return f.sign_bit();
    case Specials::none:
      switch (c) {
        case NanConvention::cuda: return f.max_finite_code();
        case NanConvention::ml_dtypes: return sign ? 0 : f.sign_bit();
        default: return sign_bit;
      }
  }
  return 0;
}

// Whether the default NaN an invalid operation creates (inf - inf, 0 * inf)
// is negative: x86's "QNaN floating-point indefinite" is, ARM's and the
// canonical NaN are not.
FMTCHECK_HD inline bool default_nan_negative(NanConvention c) {
  return c == NanConvention::ieee || c == NanConvention::x86 || c == NanConvention::numpy ||
         c == NanConvention::ml_dtypes || c == NanConvention::torch;
}

// The code of a NaN a conversion creates from a non-NaN input of the given
// sign (an infinity or an overflow into E4M3 without saturation, a negative
// value into E8M0).
FMTCHECK_HD inline std::uint64_t created_nan_code(const Encoding& f, NanConvention c, bool sign) {
  if (c == NanConvention::cuda && f.specials == Specials::fn) return (sign ? f.sign_bit() : 0) | f.magnitude_mask();
  // x86 and ARM create their default NaN whatever the input's sign.
  if (c == NanConvention::x86 || c == NanConvention::arm) sign = default_nan_negative(c);
  return nan_code(f, c, sign, std::uint64_t{1} << 63);
}

// Whether, of several NaN operands, the first signaling one is propagated
// before any quiet one (ARM); otherwise the first NaN operand is (x86 SSE).
inline bool signaling_operand_first(NanConvention c) { return c == NanConvention::arm; }

// Whether fma(a, b, c) = a * b + c looks at the addend c before a and b for
// its NaN, and a quiet NaN addend with 0 * inf gives the default NaN (ARM:
// FPMulAdd hands FPProcessNaNs3 the addend first); otherwise a, b, c in
// order, and 0 * inf + quiet NaN gives c's NaN (x86 FMA3).
inline bool addend_nan_first(NanConvention c) { return c == NanConvention::arm; }

}  // namespace fmtcheck
