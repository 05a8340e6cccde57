// The platform --nan conventions (nan_rules.cpp) against this machine and
// the documents that define them:
//   x86    the CPU itself: F16C's vcvtps2ph for every float32 NaN into fp16,
//          SSE's cvtsd2ss for float64 NaNs into float32, and SSE's
//          addss/subss/mulss/divss/sqrtss (F16C around them for fp16) for
//          every pair of a set of NaN and special operands.
//   arm    the bit patterns of the Arm Architecture Reference Manual's
//          pseudocode (FPDefaultNaN, FPProcessNaNs, FPConvertNaN), each
//          named at its check; test_nan_conventions_arm.cpp proves arm
//          and arm-dn against QEMU's AArch64.
//   arm-dn, riscv   the canonical convention: every NaN result is the
//          default NaN (Arm ARM FPDefaultNaN with FPCR.DN = 1; RISC-V ISA
//          manual, "Canonical NaN": 0x7FC00000 for single).
// numpy and ml_dtypes are checked against those libraries in
// tests/python/test_nan_conventions.py.
#include <doctest/doctest.h>

#include <bit>
#include <cstdint>
#include <immintrin.h>
#include <vector>

#include "f16c.hpp"
#include "fmtcheck/arith/arithmetic.hpp"
#include "fmtcheck/core/round_to_format.hpp"
#include "fmtcheck/core/unpacked.hpp"

using namespace fmtcheck;
using namespace fmtcheck::testing;

namespace {

const Policy kX86{.nan = NanConvention::x86};
const Policy kArm{.nan = NanConvention::arm};
const Policy kCanonical{.nan = NanConvention::canonical};

float from_bits(std::uint32_t b) { return std::bit_cast<float>(b); }
std::uint32_t bits_of(float x) { return std::bit_cast<std::uint32_t>(x); }

enum class Op { add, sub, mul, div };

// The CPU's float32 operation; the operands pass through memory the
// compiler cannot see into, so nothing is folded at compile time.
std::uint32_t sse(Op op, std::uint32_t a, std::uint32_t b) {
  volatile float va = from_bits(a);
  volatile float vb = from_bits(b);
  const __m128 x = _mm_set_ss(va);
  const __m128 y = _mm_set_ss(vb);
  switch (op) {
    case Op::add: return bits_of(_mm_cvtss_f32(_mm_add_ss(x, y)));
    case Op::sub: return bits_of(_mm_cvtss_f32(_mm_sub_ss(x, y)));
    case Op::mul: return bits_of(_mm_cvtss_f32(_mm_mul_ss(x, y)));
    case Op::div: return bits_of(_mm_cvtss_f32(_mm_div_ss(x, y)));
  }
  return 0;
}

Conversion library(Op op, const Format& f, std::uint64_t a, std::uint64_t b, const Policy& p) {
  switch (op) {
    case Op::add: return add(f, a, b, p);
    case Op::sub: return sub(f, a, b, p);
    case Op::mul: return mul(f, a, b, p);
    case Op::div: return div(f, a, b, p);
  }
  return {};
}

// Quiet and signaling NaNs of both signs with and without payload, the
// operands of invalid operations, and ordinary numbers.
const std::vector<std::uint32_t> kOperands32 = {
    0x7FC00000, 0xFFC00000, 0x7FC12345, 0xFFE00001, 0x7F800001, 0xFF812345, 0x7FA00000, 0x7FFFFFFF,
    0x7F800000, 0xFF800000, 0x00000000, 0x80000000, 0x3F800000, 0xBF800000, 0x7F7FFFFF, 0x00000001};
const std::vector<std::uint16_t> kOperands16 = {0x7E00, 0xFE00, 0x7E09, 0xFE01, 0x7C01, 0xFC05, 0x7D00, 0x7FFF,
                                                0x7C00, 0xFC00, 0x0000, 0x8000, 0x3C00, 0xBC00, 0x7BFF, 0x0001};

}  // namespace

TEST_CASE("x86: every float32 NaN into fp16 is what F16C's vcvtps2ph gives") {
  if (!cpu_has_f16c()) {
    MESSAGE("skipped: this CPU has no F16C, the oracle of the x86 convention");
    return;
  }
  const Rounder to_fp16(formats::fp16, kX86);
  std::uint64_t checked = 0;
  std::uint64_t mismatches = 0;
  for (const std::uint32_t sign : {0u, 0x80000000u}) {
    for (std::uint32_t mantissa = 1; mantissa < (1u << 23); ++mantissa) {
      const std::uint32_t bits = sign | 0x7F800000u | mantissa;
      const auto want = f16c_round<_MM_FROUND_TO_NEAREST_INT>(from_bits(bits));
      const auto got = to_fp16(unpack(formats::fp32, bits)).bits;
      if (got != want && ++mismatches <= 4) FAIL_CHECK("float32 " << bits << ": got " << got << ", F16C " << want);
      ++checked;
    }
  }
  CHECK(mismatches == 0);
  CHECK(checked == 2 * ((1u << 23) - 1));
}

TEST_CASE("x86: float64 NaNs into float32 as SSE's cvtsd2ss gives them") {
  const Rounder to_fp32(formats::fp32, kX86);
  std::uint64_t state = 0x9E3779B97F4A7C15ull;
  for (int i = 0; i < 1 << 20; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const std::uint64_t mantissa = (state >> 12) | (i & 1 ? 0 : 1);  // nonzero; half of them signaling-range
    const std::uint64_t bits = (static_cast<std::uint64_t>(i & 2) << 62) | 0x7FF0000000000000ull | mantissa;
    volatile double x = std::bit_cast<double>(bits);
    const std::uint32_t want = bits_of(_mm_cvtss_f32(_mm_cvtsd_ss(_mm_setzero_ps(), _mm_set_sd(x))));
    REQUIRE(to_fp32(unpack(formats::fp64, bits)).bits == want);
  }
}

TEST_CASE("x86: float32 arithmetic on NaN and invalid operands is SSE's") {
  for (const Op op : {Op::add, Op::sub, Op::mul, Op::div}) {
    for (const std::uint32_t a : kOperands32) {
      for (const std::uint32_t b : kOperands32) {
        CAPTURE(static_cast<int>(op));
        CAPTURE(a);
        CAPTURE(b);
        CHECK(library(op, formats::fp32, a, b, kX86).bits == sse(op, a, b));
      }
    }
  }
  for (const std::uint32_t a : kOperands32) {
    volatile float x = from_bits(a);
    CAPTURE(a);
    CHECK(sqrt(formats::fp32, a, kX86).bits == bits_of(_mm_cvtss_f32(_mm_sqrt_ss(_mm_set_ss(x)))));
  }
}

TEST_CASE("x86: fp16 arithmetic on NaN and invalid operands is SSE's between F16C conversions") {
  if (!cpu_has_f16c()) {
    MESSAGE("skipped: this CPU has no F16C");
    return;
  }
  // Widening is exact and keeps the payload; the float32 operation and the
  // one rounding back to fp16 are the CPU's.
  for (const Op op : {Op::add, Op::sub, Op::mul, Op::div}) {
    for (const std::uint16_t a : kOperands16) {
      for (const std::uint16_t b : kOperands16) {
        const std::uint32_t r = sse(op, bits_of(f16c_widen(a)), bits_of(f16c_widen(b)));
        CAPTURE(static_cast<int>(op));
        CAPTURE(a);
        CAPTURE(b);
        CHECK(library(op, formats::fp16, a, b, kX86).bits == f16c_round<_MM_FROUND_TO_NEAREST_INT>(from_bits(r)));
      }
    }
  }
}

TEST_CASE("arm: the Arm ARM's default NaN, NaN operand choice and NaN conversion") {
  // FPDefaultNaN: sign 0, exponent all ones, only the top fraction bit set.
  CHECK(sub(formats::fp16, 0x7C00, 0x7C00, kArm).bits == 0x7E00);      // inf - inf
  CHECK(mul(formats::fp32, 0x00000000, 0xFF800000, kArm).bits == 0x7FC00000);  // 0 * -inf
  CHECK(div(formats::bf16, 0x0000, 0x8000, kArm).bits == 0x7FC0);       // 0 / -0
  CHECK(sqrt(formats::fp16, 0xBC00, kArm).bits == 0x7E00);              // sqrt(-1)
  // FPProcessNaNs: a signaling operand wins over a quiet one in either
  // position and comes out quieted (FPProcessNaN sets the top fraction
  // bit); of two NaNs of one kind the first.
  CHECK(add(formats::fp16, 0x7E01, 0xFC05, kArm).bits == 0xFE05);
  CHECK(add(formats::fp16, 0xFC05, 0x7E01, kArm).bits == 0xFE05);
  CHECK(add(formats::fp16, 0x7E01, 0xFE02, kArm).bits == 0x7E01);
  CHECK(mul(formats::fp32, 0x7FC00001, 0x7F800002, kArm).bits == 0x7FC00002);
  // Against x86, which keeps the first NaN operand.
  CHECK(add(formats::fp16, 0x7E01, 0xFC05, kX86).bits == 0x7E01);
  // FPConvertNaN: sign kept, quiet bit set, the fraction's top bits kept.
  CHECK(round_to_format(unpack(formats::fp32, 0xFF812345), formats::fp16, kArm).bits == 0xFE09);
  CHECK(round_to_format(unpack(formats::fp32, 0x7F800001), formats::fp16, kArm).bits == 0x7E00);
  CHECK(round_to_format(unpack(formats::fp16, 0xFC01), formats::fp32, kArm).bits == 0xFFC02000);
}

TEST_CASE("arm: fma takes the addend's NaN first (FPMulAdd, FPProcessNaNs3)") {
  // FPMulAdd(addend, op1, op2) calls FPProcessNaNs3(addend, op1, op2):
  // the first signaling NaN in that order, else the first quiet one, so
  // fmtcheck's fma(a, b, c) = a * b + c looks at c, a, b.
  const auto fma16 = [](std::uint16_t a, std::uint16_t b, std::uint16_t c, const Policy& p) {
    return fma(formats::fp16, a, b, c, p);
  };
  CHECK(fma16(0x7E01, 0x7E02, 0x7E03, kArm).bits == 0x7E03);  // three quiet NaNs: the addend's
  CHECK(fma16(0x7E01, 0x7E02, 0x3C00, kArm).bits == 0x7E01);  // no NaN addend: op1's
  CHECK(fma16(0x3C00, 0xFE02, 0x3C00, kArm).bits == 0xFE02);
  CHECK(fma16(0x7C05, 0x7E02, 0x7E03, kArm).bits == 0x7E05);  // a signaling op1 before a quiet addend, quieted
  CHECK(fma16(0x7C05, 0x7C06, 0x7C07, kArm).bits == 0x7E07);  // three signaling NaNs: the addend's
  CHECK(fma16(0x7C05, 0x7C06, 0x3C00, kArm).bits == 0x7E05);
  CHECK(fma16(0x7E01, 0x3C00, 0xFC07, kArm).bits == 0xFE07);
  CHECK(fma(formats::fp32, 0x7FC00001, 0x3F800000, 0x7FC00002, kArm).bits == 0x7FC00002);
  // A quiet NaN addend with 0 * inf: the default NaN, invalid; a signaling
  // addend is processed as usual (quieted, invalid).
  const Conversion zero_inf = fma16(0x0000, 0x7C00, 0xFE03, kArm);
  CHECK(zero_inf.bits == 0x7E00);
  CHECK(zero_inf.flags.has(Flag::invalid));
  CHECK(fma16(0xFC00, 0x8000, 0x7E03, kArm).bits == 0x7E00);
  const Conversion zero_inf_signaling = fma16(0x0000, 0x7C00, 0x7C03, kArm);
  CHECK(zero_inf_signaling.bits == 0x7E03);
  CHECK(zero_inf_signaling.flags.has(Flag::invalid));
  // x86 keeps operand order and the quiet addend's NaN after 0 * inf.
  CHECK(fma16(0x7E01, 0x7E02, 0x7E03, kX86).bits == 0x7E01);
  CHECK(fma16(0x0000, 0x7C00, 0xFE03, kX86).bits == 0xFE03);
}

TEST_CASE("arm-dn and riscv: every NaN result is the canonical NaN") {
  REQUIRE(parse_nan_convention("arm-dn") == NanConvention::canonical);
  REQUIRE(parse_nan_convention("riscv") == NanConvention::canonical);
  CHECK(round_to_format(unpack(formats::fp32, 0xFF812345), formats::fp16, kCanonical).bits == 0x7E00);
  CHECK(add(formats::fp32, 0xFFC12345, 0x3F800000, kCanonical).bits == 0x7FC00000);
  CHECK(sub(formats::fp32, 0x7F800000, 0x7F800000, kCanonical).bits == 0x7FC00000);
}

TEST_CASE("x86 and arm differ from ieee only in the NaNs a conversion creates") {
  // 500 overflows E4M3 (no infinity) without saturation: ieee keeps the
  // input's sign, x86 gives its negative default NaN, arm its positive one.
  const Unpacked minus500 = unpack(-500.0f);
  const Unpacked plus500 = unpack(500.0f);
  CHECK(round_to_format(minus500, formats::e4m3, Policy{}).bits == 0xFF);
  CHECK(round_to_format(plus500, formats::e4m3, kX86).bits == 0xFF);
  CHECK(round_to_format(minus500, formats::e4m3, kArm).bits == 0x7F);
}
