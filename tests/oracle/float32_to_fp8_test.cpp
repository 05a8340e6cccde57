// Every float32 input -> OCP FP8 (E4M3, E5M2), nearest-even, saturating and
// not, checked against NVIDIA's host conversion __nv_cvt_float_to_fp8 with
// __NV_SATFINITE / __NV_NOSAT (fmtcheck's NanConvention::cuda: its float
// path first turns every NaN into 0x7FFFFFFF, so E4M3 gives 0x7F and E5M2
// 0x7F for every NaN). Flags are derived from CUDA's results
// (derived_flags.hpp): "overflowed" is the non-saturating conversion giving
// infinity or NaN for a finite input; underflow is not checked here.
#include <doctest/doctest.h>

#include <array>
#include <bit>
#include <cmath>

#include "comparisons.hpp"
#include "derived_flags.hpp"
#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/round_to_format.hpp"
#include "fmtcheck/core/unpacked.hpp"

#if FMTCHECK_HAVE_CUDA_HEADERS

#include <cuda_fp16.h>
#include <cuda_fp8.h>

namespace {

using fmtcheck::NanConvention;
using fmtcheck::Overflow;
using fmtcheck::Policy;
namespace oracle = fmtcheck::oracle;

struct Target {
  const char* name;
  const fmtcheck::Format* format;
  __nv_fp8_interpretation_t kind;
  double min_normal;
  std::array<float, 256> decoded{};  // every code widened by CUDA itself
};

Policy policy(Overflow o) {
  Policy p;
  p.overflow = o;
  p.nan = NanConvention::cuda;
  return p;
}

Target make_target(const char* name, const fmtcheck::Format& f, __nv_fp8_interpretation_t kind, double min_normal) {
  Target t{name, &f, kind, min_normal};
  for (unsigned c = 0; c < 256; ++c) {
    t.decoded[c] = __half2float(__half(__nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(c), kind)));
  }
  return t;
}

}  // namespace

TEST_CASE("float32 -> e4m3 / e5m2, every input, rne, sat and nosat: CUDA __nv_cvt_float_to_fp8") {
  const std::array<Target, 2> targets = {make_target("e4m3", fmtcheck::formats::e4m3, __NV_E4M3, 0x1p-6),
                                         make_target("e5m2", fmtcheck::formats::e5m2, __NV_E5M2, 0x1p-14)};
  const std::array<Policy, 2> policies = {policy(Overflow::nosat), policy(Overflow::sat)};
  // Built once: the sweep rounds every input under each [target][overflow].
  const std::array<std::array<fmtcheck::Rounder, 2>, 2> round = {{
      {fmtcheck::Rounder(*targets[0].format, policies[0]), fmtcheck::Rounder(*targets[0].format, policies[1])},
      {fmtcheck::Rounder(*targets[1].format, policies[0]), fmtcheck::Rounder(*targets[1].format, policies[1])},
  }};
  oracle::Comparisons cmp;
  std::array<std::array<std::size_t, 2>, 2> bits_id{}, flags_id{};
  for (int t = 0; t < 2; ++t) {
    for (int o = 0; o < 2; ++o) {
      const std::string what = std::string(targets[t].name) + (o == 0 ? " nosat" : " sat");
      bits_id[t][o] = cmp.add(what + " bits");
      flags_id[t][o] = cmp.add(what + " flags except underflow");
    }
  }
  const auto result = oracle::timed_sweep("float32 -> e4m3/e5m2", [&](std::uint32_t input) {
    const float x = std::bit_cast<float>(input);
    const fmtcheck::Unpacked u = fmtcheck::unpack(x);
    bool ok = true;
    for (int t = 0; t < 2; ++t) {
      const Target& target = targets[t];
      const __nv_fp8_storage_t nosat = __nv_cvt_float_to_fp8(x, __NV_NOSAT, target.kind);
      const bool overflowed = std::isfinite(x) && !std::isfinite(target.decoded[nosat]);
      for (int o = 0; o < 2; ++o) {
        const __nv_fp8_storage_t want = o == 0 ? nosat : __nv_cvt_float_to_fp8(x, __NV_SATFINITE, target.kind);
        const fmtcheck::Conversion mine = round[t][o](u);
        ok &= cmp.expect(bits_id[t][o], input, want, mine.bits);
        const oracle::Outcome outcome{x, target.decoded[want], target.min_normal, overflowed};
        const fmtcheck::Flags flags = oracle::ieee_flags_except_underflow(outcome) | oracle::event_flags(outcome);
        ok &= cmp.expect(flags_id[t][o], input, flags.bits(), oracle::without_underflow(mine.flags).bits());
      }
    }
    return ok;
  });
  cmp.report();
  CHECK(result.mismatches == 0);
}

#else

TEST_CASE("float32 -> e4m3 / e5m2 against CUDA __nv_cvt_float_to_fp8") {
  MESSAGE("SKIPPED: cuda_fp8.h was not found at configure time (set FMTCHECK_CUDA_INCLUDE_DIR); "
          "there is no other FP8 oracle in C++ on this machine");
}

#endif
