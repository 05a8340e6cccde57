// The CPU's F16C instructions, the independent fp16 rounding of the CPU
// oracles; detected at run time (tests skip, saying why, where it is absent).
#pragma once

#include <cpuid.h>
#include <cstdint>
#include <immintrin.h>

namespace fmtcheck::testing {

inline bool cpu_has_f16c() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) != 0;
}

// An fp16 code widened to float (exact).
__attribute__((target("f16c"))) inline float f16c_widen(std::uint16_t h) {
  return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(h)));
}

// A float rounded to fp16 by vcvtps2ph with a constant rounding immediate.
template <int Immediate>
__attribute__((target("f16c"))) std::uint16_t f16c_round(float x) {
  return static_cast<std::uint16_t>(_mm_extract_epi16(_mm_cvtps_ph(_mm_set_ss(x), Immediate), 0));
}

}  // namespace fmtcheck::testing
