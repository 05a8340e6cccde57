// Every float32 input -> the OCP MX element and scale formats, checked
// against NVIDIA's host conversions:
//   e2m3, e3m2 (FP6) and e2m1 (FP4), nearest-even: __nv_cvt_float_to_fp6 /
//     __nv_cvt_float_to_fp4 with cudaRoundNearest. These formats have no
//     infinity or NaN; CUDA saturates out-of-range values and infinities to
//     +-max and maps NaN to +max, which is fmtcheck's NanConvention::cuda
//     with Overflow::sat.
//   e8m0 (the unsigned power-of-two scale), toward zero and up, saturating
//     and not: __nv_cvt_float_to_e8m0 with cudaRoundZero / cudaRoundPosInf.
//     CUDA rounds the magnitude, so -x gives the code of +x, and maps +-0 to
//     code 0 (2^-127). fmtcheck treats E8M0 as a format of positive values
//     without zero: a negative or zero input has no rounding there and is an
//     invalid conversion (NaN, 0xFF). The comparison is therefore restricted
//     to inputs with the sign bit clear other than +0 (every positive finite
//     value, +inf and every NaN of either sign: 2^31 - 1 + 2^23 inputs),
//     where CUDA's result is a rounding of the value itself.
// Flags are not checked here: CUDA saturates without telling whether a value
// overflowed, so no flag follows from its result alone.
#include <doctest/doctest.h>

#include <array>
#include <bit>
#include <cmath>
#include <vector>

#include "comparisons.hpp"
#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/round_to_format.hpp"
#include "fmtcheck/core/unpacked.hpp"

#if FMTCHECK_HAVE_CUDA_HEADERS && FMTCHECK_HAVE_CUDA_FP6_FP4

#include <cuda_fp4.h>
#include <cuda_fp6.h>
#include <cuda_fp8.h>

namespace {

using fmtcheck::NanConvention;
using fmtcheck::Overflow;
using fmtcheck::Policy;
using fmtcheck::Rounding;
namespace oracle = fmtcheck::oracle;

Policy policy(Rounding r, Overflow o) {
  Policy p;
  p.rounding = r;
  p.overflow = o;
  p.nan = NanConvention::cuda;
  return p;
}

struct ElementCase {
  const char* name;
  const fmtcheck::Format* format;
  std::uint8_t (*cuda)(float);
};

const std::array<ElementCase, 3> element_cases = {{
    {"e2m3", &fmtcheck::formats::e2m3, [](float x) { return __nv_cvt_float_to_fp6(x, __NV_E2M3, cudaRoundNearest); }},
    {"e3m2", &fmtcheck::formats::e3m2, [](float x) { return __nv_cvt_float_to_fp6(x, __NV_E3M2, cudaRoundNearest); }},
    {"e2m1", &fmtcheck::formats::e2m1, [](float x) { return __nv_cvt_float_to_fp4(x, __NV_E2M1, cudaRoundNearest); }},
}};

struct ScaleCase {
  const char* name;
  Policy policy;
  __nv_saturation_t saturation;
  cudaRoundMode rounding;
};

const std::array<ScaleCase, 4> scale_cases = {{
    {"e8m0 rtz nosat", policy(Rounding::rtz, Overflow::nosat), __NV_NOSAT, cudaRoundZero},
    {"e8m0 rtz sat", policy(Rounding::rtz, Overflow::sat), __NV_SATFINITE, cudaRoundZero},
    {"e8m0 rup nosat", policy(Rounding::rup, Overflow::nosat), __NV_NOSAT, cudaRoundPosInf},
    {"e8m0 rup sat", policy(Rounding::rup, Overflow::sat), __NV_SATFINITE, cudaRoundPosInf},
}};

// Where CUDA's E8M0 result is a rounding of the value (see the top comment).
bool e8m0_comparable(std::uint32_t input) { return std::isnan(std::bit_cast<float>(input)) || (input >> 31 == 0 && input != 0); }

}  // namespace

TEST_CASE("float32 -> e2m3 / e3m2 / e2m1 (rne) and e8m0 (rtz, rup): CUDA host conversions") {
  oracle::Comparisons cmp;
  std::array<std::size_t, element_cases.size()> element_id{};
  for (std::size_t k = 0; k < element_cases.size(); ++k) element_id[k] = cmp.add(std::string(element_cases[k].name) + " rne sat bits");
  std::array<std::size_t, scale_cases.size()> scale_id{};
  for (std::size_t k = 0; k < scale_cases.size(); ++k) scale_id[k] = cmp.add(std::string(scale_cases[k].name) + " bits");
  const Policy sat = policy(Rounding::rne, Overflow::sat);
  // Built once: the sweep rounds every input in each case.
  std::vector<fmtcheck::Rounder> round_element, round_scale;
  for (const ElementCase& c : element_cases) round_element.emplace_back(*c.format, sat);
  for (const ScaleCase& c : scale_cases) round_scale.emplace_back(fmtcheck::formats::e8m0, c.policy);

  const auto result = oracle::timed_sweep("float32 -> e2m3/e3m2/e2m1/e8m0", [&](std::uint32_t input) {
    const float x = std::bit_cast<float>(input);
    const fmtcheck::Unpacked u = fmtcheck::unpack(x);
    bool ok = true;
    for (std::size_t k = 0; k < element_cases.size(); ++k) {
      const ElementCase& c = element_cases[k];
      ok &= cmp.expect(element_id[k], input, c.cuda(x), round_element[k](u).bits);
    }
    if (e8m0_comparable(input)) {
      for (std::size_t k = 0; k < scale_cases.size(); ++k) {
        const ScaleCase& c = scale_cases[k];
        ok &= cmp.expect(scale_id[k], input, __nv_cvt_float_to_e8m0(x, c.saturation, c.rounding),
                         round_scale[k](u).bits);
      }
    }
    return ok;
  });
  cmp.report();
  CHECK(result.mismatches == 0);
}

#else

TEST_CASE("float32 -> MX formats against CUDA host conversions") {
  MESSAGE("SKIPPED: cuda_fp6.h / cuda_fp4.h / cuda_fp8.h were not found at configure time "
          "(CUDA 12.8 or later; set FMTCHECK_CUDA_INCLUDE_DIR)");
}

#endif
