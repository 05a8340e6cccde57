// The SIMD batch conversion against the core, on every float32 input, for
// every (format, policy) the kernel serves: the bits of each value and the
// flag counts of each group of 16 values (one AVX-512 vector, two AVX2 ones),
// so a wrong flag cannot hide behind a right one elsewhere in the tensor.
#include <doctest/doctest.h>

#include <bit>
#include <chrono>
#include <cstdio>

#include "batch_convert_plan.hpp"
#include "exhaustive.hpp"
#include "fmtcheck/convert.hpp"

namespace {

using namespace fmtcheck;

constexpr std::uint32_t kGroup = 16;

template <typename Out>
bool group_agrees(std::uint32_t first, const Format& f, const Policy& p) {
  float in[kGroup];
  for (std::uint32_t i = 0; i < kGroup; ++i) in[i] = std::bit_cast<float>(first + i);
  Out fast[kGroup];
  const FlagCounts fast_counts = convert_batch(in, f, p, std::span<Out>(fast));
  FlagCounts core_counts;
  bool same = true;
  for (std::uint32_t i = 0; i < kGroup; ++i) {
    const Conversion c = round_to_format(unpack(in[i]), f, p);
    core_counts.add(c.flags);
    same = same && fast[i] == c.bits;
  }
  return same && fast_counts.values == core_counts.values && fast_counts.count == core_counts.count;
}

}  // namespace

TEST_CASE("batch float32 conversion kernel == round_to_format on all 2^32 inputs, every served format and policy") {
  for (const auto& pair : detail::kernel_proven_pairs()) {
    const Format& f = *pair.format;
    const Policy& p = pair.policy;
    CAPTURE(f.name);
    CAPTURE(describe(p));
    // The pair must really take the kernel, or this proves nothing.
    REQUIRE(detail::make_convert_plan(f, p).has_value());
    const auto start = std::chrono::steady_clock::now();
    // Each group is checked from its first input; the others pass through.
    const auto result = testing::sweep_float32([&](std::uint32_t bits) {
      if (bits % kGroup != 0) return true;
      return f.storage_bits == 8 ? group_agrees<std::uint8_t>(bits, f, p) : group_agrees<std::uint16_t>(bits, f, p);
    });
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("%s %s: 2^32 inputs in %.1f s\n", f.name.c_str(), describe(p).c_str(), seconds);
    CHECK(result.mismatches == 0);
    for (const std::uint32_t first : result.examples) {
      MESSAGE("group starting at float32 bits 0x" << std::hex << first << " differs");
    }
  }
}
