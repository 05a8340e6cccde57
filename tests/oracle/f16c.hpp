// The CPU's own float32 <-> fp16 conversions (F16C vcvtps2ph / vcvtph2ps):
// an oracle for fp16 bits, and, by converting exactly scaled copies of the
// input in the other vector lanes, for tininess and overflow as IEEE 754
// defines them (rounding with an unbounded exponent). Compiled with a target
// attribute so the test binary still runs on CPUs without F16C; callers
// check have_f16c() first.
//
// Why not MXCSR's flags: clearing them before every conversion (ldmxcsr)
// would make the exhaustive sweep about 20 times slower than the conversions
// themselves. Compared once outside the suite, every input's MXCSR flags in
// all four modes agree with fmtcheck (tininess after rounding, as x86
// detects it).
#pragma once

#include <immintrin.h>

#include <array>
#include <cmath>
#include <cstdint>

namespace fmtcheck::oracle {

inline bool have_f16c() { return __builtin_cpu_supports("f16c") != 0; }

struct F16cResult {
  std::uint16_t bits = 0;   // x rounded to fp16
  float value = 0;          // bits widened back to float32 (exact)
  bool tiny = false;        // x rounded to 11 bits with unbounded exponent is below 2^-14 in magnitude
  bool overflowed = false;  // x rounded to 11 bits with unbounded exponent exceeds 65504 in magnitude
};

// Rounding immediates of vcvtps2ph, in this order: nearest-even, toward
// zero, up, down (bit 2 clear: the immediate, not MXCSR.RC, decides).
inline constexpr std::array<int, 4> f16c_rounding_immediates = {
    _MM_FROUND_TO_NEAREST_INT, _MM_FROUND_TO_ZERO, _MM_FROUND_TO_POS_INF, _MM_FROUND_TO_NEG_INF};

// Lane 0 holds x; lane 1 holds x * 2^24, which for |x| < 2^-14 is a normal
// fp16 input, so its rounding is the unbounded-exponent rounding scaled by
// 2^24 (tiny iff below 2^10; smaller x are tiny whatever it gives); lane 2
// holds x * 2^-16, exact wherever overflow is possible, and the unbounded
// rounding exceeds 65504 iff it reaches 2^16, i.e. iff lane 2 rounds to >= 1.
template <int Imm>
__attribute__((target("f16c"))) inline F16cResult f16c_float_to_half(__m128 lanes) {
  const __m128i h = _mm_cvtps_ph(lanes, Imm);
  alignas(16) float wide[4];
  _mm_store_ps(wide, _mm_cvtph_ps(h));
  // Only a finite input can overflow (an infinity stays one, exactly).
  const bool finite = std::isfinite(_mm_cvtss_f32(lanes));
  return {static_cast<std::uint16_t>(_mm_extract_epi16(h, 0)), wide[0], std::fabs(wide[1]) < 0x1p10f,
          finite && std::fabs(wide[2]) >= 1.0f};
}

// x in all four rounding modes, in the order of f16c_rounding_immediates.
__attribute__((target("f16c"))) inline std::array<F16cResult, 4> f16c_float_to_half_all_modes(float x) {
  const __m128 lanes = _mm_setr_ps(x, x * 0x1p24f, x * 0x1p-16f, 0.0f);
  return {f16c_float_to_half<f16c_rounding_immediates[0]>(lanes), f16c_float_to_half<f16c_rounding_immediates[1]>(lanes),
          f16c_float_to_half<f16c_rounding_immediates[2]>(lanes), f16c_float_to_half<f16c_rounding_immediates[3]>(lanes)};
}

// fp16 -> float32 by the CPU (exact): a decode oracle.
__attribute__((target("f16c"))) inline float f16c_half_to_float(std::uint16_t h) {
  return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(h)));
}

}  // namespace fmtcheck::oracle
