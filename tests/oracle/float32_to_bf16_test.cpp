// Every float32 input -> bf16, checked in one sweep against:
//   NVIDIA's host conversions __float2bfloat16_rn/_rz/_ru/_rd (no
//     saturation; NaN -> 0x7FFF, fmtcheck's NanConvention::cuda);
//   the saturating nearest-even conversion, for which no independent
//     implementation exists: its expectation is derived from CUDA's
//     non-saturating result (infinity -> max finite 0x7F7F with the sign,
//     NaN and everything else unchanged), which is what SATFINITE means;
//   Eigen::bfloat16 (nearest-even), see eigen_bf16_nan below.
// Flags are derived from CUDA's result (derived_flags.hpp); underflow is not
// checked here (fp16's test checks it against the CPU).
#include <doctest/doctest.h>

#include <Eigen/Core>
#include <array>
#include <bit>
#include <cmath>
#include <vector>

#include "comparisons.hpp"
#include "derived_flags.hpp"
#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/round_to_format.hpp"
#include "fmtcheck/core/unpacked.hpp"

#if FMTCHECK_HAVE_CUDA_HEADERS
#include <cuda_bf16.h>
#endif

namespace {

using fmtcheck::NanConvention;
using fmtcheck::Overflow;
using fmtcheck::Policy;
using fmtcheck::Rounding;
namespace oracle = fmtcheck::oracle;

Policy policy(Rounding r, Overflow o, NanConvention nan) {
  Policy p;
  p.rounding = r;
  p.overflow = o;
  p.nan = nan;
  return p;
}

// Eigen's float_to_bfloat16_rtne turns every NaN into 0x7FC0 with the
// input's sign: fmtcheck's canonical NaN plus the sign. No fmtcheck
// convention keeps the sign without the payload, so the test builds that code
// from the canonical one and says so here.
std::uint64_t eigen_bf16_nan(const fmtcheck::Unpacked& u, std::uint32_t input) {
  const fmtcheck::Conversion canonical = fmtcheck::round_to_format(
      u, fmtcheck::formats::bf16, policy(Rounding::rne, Overflow::nosat, NanConvention::canonical));
  return canonical.bits | ((input >> 31) << 15);
}

#if FMTCHECK_HAVE_CUDA_HEADERS
float bf16_to_float(std::uint16_t b) { return __bfloat162float(__nv_bfloat16(__nv_bfloat16_raw{b})); }

struct Case {
  const char* name;
  Policy policy;
  std::uint16_t (*cuda)(float);  // the oracle's non-saturating conversion
};

std::uint16_t raw(__nv_bfloat16 b) { return static_cast<__nv_bfloat16_raw>(b).x; }

// cases[0] is the conversion Eigen is compared with; the sweep computes it once.
const std::array<Case, 5> cases = {{
    {"rne nosat (__float2bfloat16_rn)", policy(Rounding::rne, Overflow::nosat, NanConvention::cuda),
     [](float x) { return raw(__float2bfloat16_rn(x)); }},
    {"rne sat (derived from __float2bfloat16_rn)", policy(Rounding::rne, Overflow::sat, NanConvention::cuda),
     [](float x) { return raw(__float2bfloat16_rn(x)); }},
    {"rtz (__float2bfloat16_rz)", policy(Rounding::rtz, Overflow::nosat, NanConvention::cuda),
     [](float x) { return raw(__float2bfloat16_rz(x)); }},
    {"rup (__float2bfloat16_ru)", policy(Rounding::rup, Overflow::nosat, NanConvention::cuda),
     [](float x) { return raw(__float2bfloat16_ru(x)); }},
    {"rdn (__float2bfloat16_rd)", policy(Rounding::rdn, Overflow::nosat, NanConvention::cuda),
     [](float x) { return raw(__float2bfloat16_rd(x)); }},
}};
#endif

}  // namespace

TEST_CASE("float32 -> bf16, every input: CUDA host rn/rz/ru/rd, saturating rn derived from it, Eigen::bfloat16") {
  oracle::Comparisons cmp;
  const std::size_t eigen_bits = cmp.add("Eigen::bfloat16 rne bits (NaN: canonical with the input's sign)");
#if FMTCHECK_HAVE_CUDA_HEADERS
  std::array<std::size_t, cases.size()> bits_id{}, flags_id{};
  for (std::size_t k = 0; k < cases.size(); ++k) {
    bits_id[k] = cmp.add(std::string(cases[k].name) + " bits");
    flags_id[k] = cmp.add(std::string(cases[k].name) + " flags except underflow");
  }
#else
  MESSAGE("CUDA comparison skipped: cuda_bf16.h was not found at configure time; only Eigen::bfloat16 is compared");
#endif
  const Policy rne = policy(Rounding::rne, Overflow::nosat, NanConvention::cuda);
  const fmtcheck::Rounder round_rne(fmtcheck::formats::bf16, rne);
#if FMTCHECK_HAVE_CUDA_HEADERS
  std::vector<fmtcheck::Rounder> round_case;  // built once: the sweep rounds every input in each case
  for (const Case& c : cases) round_case.emplace_back(fmtcheck::formats::bf16, c.policy);
#endif
  const auto result = oracle::timed_sweep("float32 -> bf16", [&](std::uint32_t input) {
    const float x = std::bit_cast<float>(input);
    const fmtcheck::Unpacked u = fmtcheck::unpack(x);
    const fmtcheck::Conversion nearest = round_rne(u);
    bool ok = cmp.expect(eigen_bits, input, Eigen::numext::bit_cast<std::uint16_t>(Eigen::bfloat16(x)),
                         u.is_nan() ? eigen_bf16_nan(u, input) : nearest.bits);
#if FMTCHECK_HAVE_CUDA_HEADERS
    for (std::size_t k = 0; k < cases.size(); ++k) {
      const Case& c = cases[k];
      const fmtcheck::Conversion mine = k == 0 ? nearest : round_case[k](u);
      std::uint16_t want = c.cuda(x);
      // bf16 has float32's exponent range, so an infinite result from a
      // finite input is exactly an overflow (truncation never overflows).
      const bool overflowed = std::isfinite(x) && (want & 0x7FFFu) == 0x7F80u;
      if (c.policy.overflow == Overflow::sat && (want & 0x7FFFu) == 0x7F80u) want = (want & 0x8000u) | 0x7F7Fu;
      ok &= cmp.expect(bits_id[k], input, want, mine.bits);
      const oracle::Outcome outcome{x, bf16_to_float(want), 0x1p-126, overflowed};
      const fmtcheck::Flags flags = oracle::ieee_flags_except_underflow(outcome) | oracle::event_flags(outcome);
      ok &= cmp.expect(flags_id[k], input, flags.bits(), oracle::without_underflow(mine.flags).bits());
    }
#endif
    return ok;
  });
  cmp.report();
  CHECK(result.mismatches == 0);
}
