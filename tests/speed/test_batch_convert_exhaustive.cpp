// The SIMD batch conversion against the core, on every float32 input, for
// every (format, policy) the kernel serves: the bits of each value and the
// flag counts of each group of 16 values (one AVX-512 vector, two AVX2 ones),
// so a wrong flag cannot hide behind a right one elsewhere in the tensor.
//
// The kernel is called through its internal entry point with the plan built
// once, one group at a time: what convert_batch runs, without re-deriving
// the plan 2^28 times. The core runs value by value, as every caller's
// fallback does. Under stochastic rounding input i (its bits) sits at
// position i of one RandomStream, whose draw(i) the core takes.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <vector>

#include "batch_convert_fast.hpp"
#include "batch_convert_plan.hpp"
#include "exhaustive.hpp"
#include "fmtcheck/convert.hpp"
#include "fmtcheck/random.hpp"

namespace {

using namespace fmtcheck;

constexpr std::uint32_t kGroup = 16;
constexpr std::uint32_t kBlock = 4096;  // inputs per step of one thread
constexpr std::uint64_t kSeed = 0x5EED2026;

// A group's ten flag counts (each at most 16) in 6-bit fields of one word:
// the core's side adds one table entry per value instead of ten counters.
std::uint64_t packed(const FlagCounts& counts) {
  std::uint64_t word = 0;
  for (int f = 0; f < flag_count; ++f) word |= counts.count[f] << (6 * f);
  return word;
}
const std::array<std::uint64_t, 1u << flag_count>& packed_flags() {
  static const auto table = [] {
    std::array<std::uint64_t, 1u << flag_count> t{};
    for (std::uint32_t bits = 0; bits < t.size(); ++bits) {
      FlagCounts one;
      one.add(Flags(static_cast<std::uint16_t>(bits)));
      t[bits] = packed(one);
    }
    return t;
  }();
  return table;
}
static_assert(kGroup < 64, "a group's counts must fit in 6 bits");

struct Mismatches {
  std::uint64_t groups = 0;
  std::vector<std::uint32_t> first_inputs;  // of the first few groups that differ
};

// Groups [first, last) of 16 consecutive float32 bit patterns.
template <typename Out>
Mismatches check_groups(const detail::ConvertPlan& plan, std::uint64_t first, std::uint64_t last) {
  Mismatches bad;
  const auto& table = packed_flags();
  std::array<float, kBlock> in;
  std::array<Out, kBlock> fast;
  for (std::uint64_t block = first; block < last; block += kBlock / kGroup) {
    const std::uint64_t groups = std::min<std::uint64_t>(kBlock / kGroup, last - block);
    for (std::uint32_t i = 0; i < groups * kGroup; ++i) {
      in[i] = std::bit_cast<float>(static_cast<std::uint32_t>(block * kGroup + i));
    }
    Policy policy = *plan.policy;
    const bool stochastic = policy.rounding == Rounding::sr;
    for (std::uint32_t g = 0; g < groups; ++g) {
      const std::uint64_t first_input = (block + g) * kGroup;
      const RandomStream stream{kSeed, first_input};
      FlagCounts fast_counts;
      detail::convert_float32_fast(plan, &in[g * kGroup], kGroup, &fast[g * kGroup], stochastic ? &stream : nullptr,
                                   &fast_counts);
      std::uint64_t core_counts = 0;
      bool same = true;
      for (std::uint32_t i = g * kGroup; i < (g + 1) * kGroup; ++i) {
        if (stochastic) policy.random_bits = RandomStream{kSeed, 0}.draw(block * kGroup + i);
        const Conversion c = round_to_format(unpack(in[i]), *plan.format, policy);
        core_counts += table[c.flags.bits()];
        same = same && fast[i] == c.bits;
      }
      if (!same || fast_counts.values != kGroup || packed(fast_counts) != core_counts) {
        if (bad.first_inputs.size() < 8) bad.first_inputs.push_back(static_cast<std::uint32_t>(first_input));
        ++bad.groups;
      }
    }
  }
  return bad;
}

// All 2^28 groups, split over every core.
Mismatches check_every_input(const detail::ConvertPlan& plan) {
  Mismatches all;
  std::mutex mutex;
  testing::split_over_cores((std::uint64_t{1} << 32) / kGroup, [&](unsigned, std::uint64_t begin, std::uint64_t end) {
    const Mismatches mine = plan.format->storage_bits == 8 ? check_groups<std::uint8_t>(plan, begin, end)
                                                           : check_groups<std::uint16_t>(plan, begin, end);
    const std::lock_guard lock(mutex);
    all.groups += mine.groups;
    all.first_inputs.insert(all.first_inputs.end(), mine.first_inputs.begin(), mine.first_inputs.end());
  });
  std::sort(all.first_inputs.begin(), all.first_inputs.end());
  return all;
}

}  // namespace

TEST_CASE("batch float32 conversion kernel == round_to_format on all 2^32 inputs, every served format and policy") {
  for (const auto& pair : detail::kernel_proven_pairs()) {
    const Format& f = *pair.format;
    const Policy& p = pair.policy;
    CAPTURE(f.name);
    CAPTURE(describe(p));
    // The pair must really take the kernel, or this proves nothing.
    const auto plan = detail::make_convert_plan(f, p);
    REQUIRE(plan.has_value());
    const auto start = std::chrono::steady_clock::now();
    const Mismatches bad = check_every_input(*plan);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("%s %s: 2^32 inputs in %.1f s\n", f.name.c_str(), describe(p).c_str(), seconds);
    CHECK(bad.groups == 0);
    for (const std::uint32_t first : bad.first_inputs) {
      MESSAGE("group starting at float32 bits 0x" << std::hex << first << " differs");
    }
  }
}
