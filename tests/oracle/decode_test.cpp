// Every code of fp16, bf16, e4m3, e5m2, e2m3, e3m2, e2m1 and e8m0 -> value
// through fmtcheck::to_double, against the oracles' own widening:
// CUDA (__half2float, __bfloat162float, __nv_cvt_fp8_to_halfraw,
// __nv_cvt_fp6_to_halfraw, __nv_cvt_fp4_to_halfraw, __nv_cvt_e8m0_to_bf16raw;
// the narrow ones go through a half or bf16, which holds them exactly), the
// CPU's F16C vcvtph2ps, Eigen::half and Eigen::bfloat16. Values must agree
// bit for bit as doubles (so -0 is not 0); for NaN codes only NaN-ness is
// compared, because the oracles canonicalise the NaN they widen to.
#include <doctest/doctest.h>

#include <Eigen/Core>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <functional>
#include <string>

#include "f16c.hpp"
#include "fmtcheck/core/decode.hpp"
#include "fmtcheck/core/format.hpp"

#if FMTCHECK_HAVE_CUDA_HEADERS
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#endif
#if FMTCHECK_HAVE_CUDA_HEADERS && FMTCHECK_HAVE_CUDA_FP6_FP4
#include <cuda_fp4.h>
#include <cuda_fp6.h>
#endif

namespace {

bool same_value(double oracle, double mine) {
  if (std::isnan(oracle) || std::isnan(mine)) return std::isnan(oracle) && std::isnan(mine);
  return std::bit_cast<std::uint64_t>(oracle) == std::bit_cast<std::uint64_t>(mine);
}

// Every code of f against oracle(code); one CHECK with the first mismatches.
void check_every_code(const fmtcheck::Format& f, const char* oracle_name, const std::function<float(std::uint32_t)>& oracle) {
  const std::uint32_t codes = std::uint32_t{1} << f.width();
  std::uint32_t mismatches = 0;
  std::string examples;
  for (std::uint32_t code = 0; code < codes; ++code) {
    const double want = oracle(code);
    const double got = fmtcheck::to_double(f, code);
    if (!same_value(want, got) && ++mismatches <= 4) {
      char line[96];
      std::snprintf(line, sizeof line, "\n  code 0x%x: oracle %a, fmtcheck %a", code, want, got);
      examples += line;
    }
  }
  INFO(f.name << " vs " << oracle_name << ": " << codes << " codes, " << mismatches << " mismatches" << examples);
  CHECK(mismatches == 0);
}

}  // namespace

TEST_CASE("decode every fp16 / bf16 code: F16C, Eigen") {
  if (fmtcheck::oracle::have_f16c()) {
    check_every_code(fmtcheck::formats::fp16, "F16C vcvtph2ps",
                     [](std::uint32_t c) { return fmtcheck::oracle::f16c_half_to_float(static_cast<std::uint16_t>(c)); });
  } else {
    MESSAGE("F16C decode comparison skipped: this CPU has no F16C");
  }
  check_every_code(fmtcheck::formats::fp16, "Eigen::half", [](std::uint32_t c) {
    return static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(static_cast<std::uint16_t>(c)));
  });
  check_every_code(fmtcheck::formats::bf16, "Eigen::bfloat16", [](std::uint32_t c) {
    return static_cast<float>(Eigen::numext::bit_cast<Eigen::bfloat16>(static_cast<std::uint16_t>(c)));
  });
}

#if FMTCHECK_HAVE_CUDA_HEADERS

namespace {
float from_half(__half_raw h) { return __half2float(__half(h)); }
float from_bf16(__nv_bfloat16_raw b) { return __bfloat162float(__nv_bfloat16(b)); }
}  // namespace

TEST_CASE("decode every fp16 / bf16 / e4m3 / e5m2 / e8m0 code: CUDA host conversions") {
  check_every_code(fmtcheck::formats::fp16, "__half2float",
                   [](std::uint32_t c) { return from_half(__half_raw{static_cast<unsigned short>(c)}); });
  check_every_code(fmtcheck::formats::bf16, "__bfloat162float",
                   [](std::uint32_t c) { return from_bf16(__nv_bfloat16_raw{static_cast<unsigned short>(c)}); });
  check_every_code(fmtcheck::formats::e4m3, "__nv_cvt_fp8_to_halfraw(E4M3)", [](std::uint32_t c) {
    return from_half(__nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(c), __NV_E4M3));
  });
  check_every_code(fmtcheck::formats::e5m2, "__nv_cvt_fp8_to_halfraw(E5M2)", [](std::uint32_t c) {
    return from_half(__nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(c), __NV_E5M2));
  });
  check_every_code(fmtcheck::formats::e8m0, "__nv_cvt_e8m0_to_bf16raw",
                   [](std::uint32_t c) { return from_bf16(__nv_cvt_e8m0_to_bf16raw(static_cast<__nv_fp8_storage_t>(c))); });
}

#else

TEST_CASE("decode against CUDA host conversions") {
  MESSAGE("CUDA decode comparison skipped: cuda_fp8.h was not found at configure time; F16C and Eigen still run");
}

#endif

#if FMTCHECK_HAVE_CUDA_HEADERS && FMTCHECK_HAVE_CUDA_FP6_FP4

TEST_CASE("decode every e2m3 / e3m2 / e2m1 code: CUDA host conversions") {
  check_every_code(fmtcheck::formats::e2m3, "__nv_cvt_fp6_to_halfraw(E2M3)", [](std::uint32_t c) {
    return from_half(__nv_cvt_fp6_to_halfraw(static_cast<__nv_fp6_storage_t>(c), __NV_E2M3));
  });
  check_every_code(fmtcheck::formats::e3m2, "__nv_cvt_fp6_to_halfraw(E3M2)", [](std::uint32_t c) {
    return from_half(__nv_cvt_fp6_to_halfraw(static_cast<__nv_fp6_storage_t>(c), __NV_E3M2));
  });
  check_every_code(fmtcheck::formats::e2m1, "__nv_cvt_fp4_to_halfraw(E2M1)", [](std::uint32_t c) {
    return from_half(__nv_cvt_fp4_to_halfraw(static_cast<__nv_fp4_storage_t>(c), __NV_E2M1));
  });
}

#else

TEST_CASE("decode MX element formats against CUDA host conversions") {
  MESSAGE("CUDA FP6/FP4 decode comparison skipped: cuda_fp6.h / cuda_fp4.h were not found at configure time");
}

#endif
