// The batch kernel under the caller's MXCSR: round-toward-zero, FTZ and DAZ
// set, as a program built with -ffast-math runs. The hardware steps
// (vcvtps2ph) take their rounding from the immediate, and their float32
// subnormal inputs go to the core while DAZ is set, so every served pair
// must still give the core's bits and flag counts, the core being integer
// code that MXCSR cannot touch. Each SIMD target the CPU runs is checked.
#include <doctest/doctest.h>
#include <immintrin.h>

#include <hwy/targets.h>

#include <bit>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "batch/convert_fast.hpp"
#include "batch/convert_plan.hpp"
#include "fmtcheck/batch/convert_batch.hpp"
#include "fmtcheck/core/convert.hpp"
#include "fmtcheck/core/random.hpp"

namespace {

using namespace fmtcheck;

// Float32 subnormals (a stride through all of them, both signs) between
// normal values, so that vectors mix them, plus every bit pattern near the
// fp16 and 8-bit formats' subnormal and overflow boundaries, tf32's and
// E8M0's overflow boundaries (halfway from their largest value to 2^128)
// and float32's smallest normal, where E8M0's second binade begins.
std::vector<float> inputs() {
  std::vector<float> v;
  for (std::uint32_t m = 1; m < 0x800000u; m += 4099) {
    for (const std::uint32_t sign : {0u, 0x80000000u}) {
      v.push_back(std::bit_cast<float>(sign | m));
      v.push_back(std::bit_cast<float>(sign | 0x3F800000u | m));
    }
  }
  for (const std::uint32_t centre : {0x33000000u, 0x38800000u, 0x3B800000u, 0x477FF000u, 0x47800000u, 0x43E00000u,
                                    0x7F7FF000u, 0x7F400000u, 0x00800000u}) {
    for (std::uint32_t d = 0; d < 4096; ++d) {
      v.push_back(std::bit_cast<float>(centre - 2048 + d));
      v.push_back(std::bit_cast<float>(0x80000000u | (centre - 2048 + d)));
    }
  }
  return v;
}

template <typename Out>
void check_pair(const std::vector<float>& in, const Format& f, const Policy& p) {
  CAPTURE(f.name);
  CAPTURE(describe(p));
  std::vector<Out> fast(in.size());
  const unsigned saved = _mm_getcsr();
  _mm_setcsr(saved | _MM_ROUND_TOWARD_ZERO | _MM_FLUSH_ZERO_ON | _MM_DENORMALS_ZERO_ON);
  const FlagCounts fast_counts = convert_batch(std::span<const float>(in), f, p, std::span<Out>(fast), RandomStream{9, 0});
  _mm_setcsr(saved);
  FlagCounts core_counts;
  std::size_t wrong = 0;
  Policy policy = p;
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (p.rounding == Rounding::sr) policy.random_bits = RandomStream{9, 0}.draw(i);
    const Conversion c = round_to_format(unpack(in[i]), f, policy);
    core_counts.add(c.flags);
    wrong += fast[i] != c.bits ? 1 : 0;
  }
  CHECK(wrong == 0);
  CHECK(fast_counts.count == core_counts.count);
}

}  // namespace

void check_every_pair(const std::vector<float>& in) {
  for (const auto& pair : detail::kernel_proven_pairs()) {
    switch (pair.format->storage_bits) {
      case 8: check_pair<std::uint8_t>(in, *pair.format, pair.policy); break;
      case 16: check_pair<std::uint16_t>(in, *pair.format, pair.policy); break;
      case 32: check_pair<std::uint32_t>(in, *pair.format, pair.policy); break;
      default: check_pair<std::uint64_t>(in, *pair.format, pair.policy); break;
    }
  }
}

TEST_CASE("batch conversion under MXCSR round-toward-zero, FTZ and DAZ == the core, every served pair, every target") {
  const std::vector<float> in = inputs();
  // The exhaustive proof runs every kernel target on every input under the
  // default MXCSR; this runs each target the CPU has (AVX-512 and AVX2,
  // whose routes differ) through convert_batch under the modified one.
  hwy::SetSupportedTargetsForTest(0);
  const std::vector<detail::KernelTarget> targets = detail::kernel_targets();
  for (const detail::KernelTarget& target : targets) {
    const std::string target_name = hwy::TargetName(target.target);
    CAPTURE(target_name);
    hwy::SetSupportedTargetsForTest(target.target);
    REQUIRE(detail::best_kernel_target() != nullptr);
    CHECK(detail::best_kernel_target()->target == target.target);
    check_every_pair(in);
  }
  hwy::SetSupportedTargetsForTest(0);
  MESSAGE(targets.size() << " targets run");
  CHECK(!targets.empty());
}

TEST_CASE("a CPU without AVX2 runs no kernel: convert_batch takes the core") {
  // Highway's targets below AVX2: the kernel is not compiled for them (CI
  // could not prove them on every input), so nothing may pick one.
  hwy::SetSupportedTargetsForTest(HWY_SSE4 | HWY_SSSE3 | HWY_EMU128 | HWY_SCALAR);
  CHECK(detail::kernel_targets().empty());
  CHECK(detail::best_kernel_target() == nullptr);
  check_every_pair(inputs());
  hwy::SetSupportedTargetsForTest(0);
}
