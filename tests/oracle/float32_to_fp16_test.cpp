// Every float32 input -> fp16 in all four IEEE rounding directions, checked
// in one sweep against three independent implementations:
//   NVIDIA's host conversions (__float2half_rn/_rz/_ru/_rd), NaN -> 0x7FFF,
//     which is fmtcheck's NanConvention::cuda;
//   the CPU's F16C vcvtps2ph with each rounding immediate, bits and MXCSR
//     flags; it quiets a NaN keeping sign and payload: NanConvention::ieee;
//   Eigen::half (nearest-even only), see eigen_half_nan below.
// Flags are checked against F16C: every flag follows from its results by
// the definitions (derived_flags.hpp; tininess and overflow from exactly
// scaled copies of the input, see f16c.hpp).
#include <doctest/doctest.h>

#include <Eigen/Core>
#include <array>
#include <bit>
#include <cmath>

#include "comparisons.hpp"
#include "derived_flags.hpp"
#include "f16c.hpp"
#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/round_to_format.hpp"
#include "fmtcheck/core/unpacked.hpp"

#if FMTCHECK_HAVE_CUDA_HEADERS
#include <cuda_fp16.h>
#endif

#ifdef EIGEN_HAS_FP16_C
#error "Eigen::half would use F16C here; build this test without -mf16c so Eigen stays a separate oracle"
#endif

namespace {

using fmtcheck::Flags;
using fmtcheck::NanConvention;
using fmtcheck::Policy;
using fmtcheck::Rounding;
namespace oracle = fmtcheck::oracle;

// Modes in the order of oracle::f16c_rounding_immediates.
constexpr std::array<Rounding, 4> modes = {Rounding::rne, Rounding::rtz, Rounding::rup, Rounding::rdn};
constexpr std::array<const char*, 4> mode_names = {"rne", "rtz", "rup", "rdn"};

Policy policy(Rounding r, NanConvention nan) {
  Policy p;
  p.rounding = r;
  p.nan = nan;
  return p;
}

// Eigen's float_to_half_rtne turns every NaN into 0x7E00 with the input's
// sign: fmtcheck's canonical NaN (positive, quiet bit only) plus the sign.
// No fmtcheck convention keeps the sign without the payload, so the test
// builds that code from the canonical one and says so here.
std::uint64_t eigen_half_nan(std::uint32_t input) {
  const fmtcheck::Conversion canonical =
      fmtcheck::round_to_format(fmtcheck::unpack(std::bit_cast<float>(input)), fmtcheck::formats::fp16,
                                policy(Rounding::rne, NanConvention::canonical));
  return canonical.bits | ((input >> 31) << 15);
}

#if FMTCHECK_HAVE_CUDA_HEADERS
std::uint16_t cuda_float_to_half(float x, Rounding r) {
  __half h;
  switch (r) {
    case Rounding::rtz: h = __float2half_rz(x); break;
    case Rounding::rup: h = __float2half_ru(x); break;
    case Rounding::rdn: h = __float2half_rd(x); break;
    default: h = __float2half_rn(x); break;
  }
  return static_cast<__half_raw>(h).x;
}
#endif

}  // namespace

TEST_CASE("float32 -> fp16, every input, four rounding modes: CUDA host, F16C (bits and flags), Eigen::half") {
  const fmtcheck::Format& fp16 = fmtcheck::formats::fp16;
  const bool f16c = oracle::have_f16c();
  const bool cuda = FMTCHECK_HAVE_CUDA_HEADERS != 0;
  if (!f16c) MESSAGE("F16C comparison skipped: this CPU has no F16C (__builtin_cpu_supports(\"f16c\") is false)");
  if (!cuda) MESSAGE("CUDA comparison skipped: cuda_fp16.h was not found at configure time");

  oracle::Comparisons cmp;
  std::array<std::size_t, 4> cuda_bits{}, f16c_bits{}, f16c_flags{};
  for (int k = 0; k < 4; ++k) {
    // Only comparisons that run are registered, so none reports a vacuous 0.
    if (cuda) cuda_bits[k] = cmp.add(std::string("CUDA __float2half_") + mode_names[k] + " bits (NanConvention::cuda)");
    if (f16c) {
      f16c_bits[k] = cmp.add(std::string("F16C ") + mode_names[k] + " bits (NanConvention::ieee)");
      f16c_flags[k] = cmp.add(std::string("F16C ") + mode_names[k] + " flags");
    }
  }
  const std::size_t eigen_bits = cmp.add("Eigen::half rne bits (NaN: canonical with the input's sign)");
  // Built once: the sweep rounds every input in each mode.
  std::array<Policy, 4> cuda_policies{};
  for (int k = 0; k < 4; ++k) cuda_policies[k] = policy(modes[k], NanConvention::cuda);
  const std::array<fmtcheck::Rounder, 4> round_cuda = {
      fmtcheck::Rounder(fp16, cuda_policies[0]), fmtcheck::Rounder(fp16, cuda_policies[1]),
      fmtcheck::Rounder(fp16, cuda_policies[2]), fmtcheck::Rounder(fp16, cuda_policies[3])};

  const auto result = oracle::timed_sweep("float32 -> fp16", [&](std::uint32_t input) {
    const float x = std::bit_cast<float>(input);
    const fmtcheck::Unpacked u = fmtcheck::unpack(x);
    std::array<oracle::F16cResult, 4> hw{};
    if (f16c) hw = oracle::f16c_float_to_half_all_modes(x);
    bool ok = true;
    for (int k = 0; k < 4; ++k) {
      // The NaN convention changes only NaN results, which only NaN inputs
      // produce in fp16, so other inputs are rounded once and compared with
      // every oracle.
      const fmtcheck::Conversion mine = round_cuda[k](u);
#if FMTCHECK_HAVE_CUDA_HEADERS
      ok &= cmp.expect(cuda_bits[k], input, cuda_float_to_half(x, modes[k]), mine.bits);
#endif
      if (f16c) {
        const fmtcheck::Conversion ieee =
            u.is_nan() ? fmtcheck::round_to_format(u, fp16, policy(modes[k], NanConvention::ieee)) : mine;
        ok &= cmp.expect(f16c_bits[k], input, hw[k].bits, ieee.bits);
        const oracle::Outcome outcome{x, hw[k].value, 0x1p-14, hw[k].overflowed};
        Flags expected = oracle::ieee_flags_except_underflow(outcome) | oracle::event_flags(outcome);
        if (hw[k].tiny && expected.has(fmtcheck::Flag::inexact)) expected |= fmtcheck::Flag::underflow;
        ok &= cmp.expect(f16c_flags[k], input, expected.bits(), ieee.flags.bits());
      }
      if (k == 0) {
        const std::uint64_t want = u.is_nan() ? eigen_half_nan(input) : mine.bits;
        ok &= cmp.expect(eigen_bits, input, Eigen::numext::bit_cast<std::uint16_t>(Eigen::half(x)), want);
      }
    }
    return ok;
  });
  cmp.report();
  CHECK(result.mismatches == 0);
}
