// The P3109 members' batch table (batch/convert_table.hpp) against the core
// on every float32 input, for a few pairs in CI: the bits of each value and
// the flag counts of each group of 512 values. The pairs cover signed and
// unsigned, extended and finite members, the narrowest significand
// (binary8p1: no fraction bits, an exponent range of 2^-63..2^63), the
// widest (binary8p8uf: ties of 9 significant bits, the most the table's
// buckets allow), every saturation mode and every deterministic mode
// P3109 defines.
//
// As in test_batch_convert_exhaustive.cpp, a group of 512 values in one
// binade whose result the Rounder says is shared (Rounder::shared_result)
// or decided above the last 9 mantissa bits (Rounder::shares_low_bits) is
// compared with the first value's result in every value; the core rounds
// every other value one by one.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <span>
#include <vector>

#include "batch/convert_table.hpp"
#include "exhaustive.hpp"
#include "fmtcheck/batch/convert_batch.hpp"
#include "fmtcheck/core/convert.hpp"

namespace {

using namespace fmtcheck;

constexpr std::uint32_t kGroup = 512;
constexpr int kGroupFreeBits = 40 + 9;  // an Unpacked's float32 significand sits above 40 zero bits

struct Mismatch {
  std::uint64_t groups = 0;
  std::vector<std::uint32_t> first_inputs;
};

// Groups [first, last) of kGroup consecutive bit patterns through
// convert_batch (which takes the table) and through the core.
Mismatch check_groups(const Format& f, const Policy& p, std::uint64_t first, std::uint64_t last) {
  Mismatch bad;
  const Rounder round(f, p);
  std::array<float, kGroup> in;
  std::array<std::uint8_t, kGroup> fast, core;
  for (std::uint64_t g = first; g < last; ++g) {
    for (std::uint32_t i = 0; i < kGroup; ++i) in[i] = std::bit_cast<float>(static_cast<std::uint32_t>(g * kGroup + i));
    const FlagCounts counts = convert_batch(in, f, p, std::span<std::uint8_t>(fast));
    FlagCounts core_counts;
    const Unpacked head = unpack(in[0]);
    const auto field = static_cast<std::uint32_t>(g * kGroup >> 23) & 0xFF;
    const bool alike = field != 0 && field != 0xFF &&
                       (round.shared_result(head) != nullptr || round.shares_low_bits(head, kGroupFreeBits));
    if (alike) {
      const Conversion c = round(head);
      std::fill(core.begin(), core.end(), static_cast<std::uint8_t>(c.bits));
      core_counts.add(c.flags, kGroup);
    } else {
      for (std::uint32_t i = 0; i < kGroup; ++i) {
        const Conversion c = round(unpack(in[i]));
        core[i] = static_cast<std::uint8_t>(c.bits);
        core_counts.add(c.flags);
      }
    }
    if (fast != core || counts.count != core_counts.count || counts.values != kGroup) {
      if (bad.first_inputs.size() < 8) bad.first_inputs.push_back(static_cast<std::uint32_t>(g * kGroup));
      ++bad.groups;
    }
  }
  return bad;
}

}  // namespace

TEST_CASE("P3109 batch table == round_to_format on all 2^32 float32 inputs, bits and flag counts") {
  const struct {
    int precision;
    bool is_signed, extended;
    Policy policy;
  } pairs[] = {
      {1, true, true, Policy{.rounding = Rounding::rup, .overflow = Overflow::satprop}},
      {3, true, true, Policy{.rounding = Rounding::rne, .overflow = Overflow::nosat}},
      {5, false, true, Policy{.rounding = Rounding::rdn, .overflow = Overflow::sat}},
      {2, false, false, Policy{.rounding = Rounding::rna, .overflow = Overflow::nosat}},
      {8, false, false, Policy{.rounding = Rounding::rne, .overflow = Overflow::sat}},
      {7, true, false, Policy{.rounding = Rounding::rtz, .overflow = Overflow::satprop}},
  };
  for (const auto& pair : pairs) {
    const Format f = *p3109_format(pair.precision, pair.is_signed, pair.extended);
    CAPTURE(f.name);
    CAPTURE(describe(pair.policy));
    // The pair must take the table, or this proves nothing.
    REQUIRE(detail::convert_table(f, pair.policy) != nullptr);
    const auto start = std::chrono::steady_clock::now();
    Mismatch all;
    std::mutex mutex;
    testing::split_over_cores((std::uint64_t{1} << 32) / kGroup, [&](unsigned, std::uint64_t begin, std::uint64_t end) {
      const Mismatch mine = check_groups(f, pair.policy, begin, end);
      const std::lock_guard lock(mutex);
      all.groups += mine.groups;
      all.first_inputs.insert(all.first_inputs.end(), mine.first_inputs.begin(), mine.first_inputs.end());
    });
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("%s %s: 2^32 inputs in %.1f s\n", f.name.c_str(), describe(pair.policy).c_str(), seconds);
    std::fflush(stdout);
    CHECK(all.groups == 0);
    std::sort(all.first_inputs.begin(), all.first_inputs.end());
    for (const std::uint32_t first : all.first_inputs) {
      MESSAGE("group starting at float32 bits 0x" << std::hex << first << " differs");
    }
  }
}

TEST_CASE("the P3109 table serves the deterministic modes with default subnormals, tininess and NaNs only") {
  const Format f = *p3109_format(4, true, false);
  CHECK(detail::table_serves(f, Policy{.rounding = Rounding::rna, .overflow = Overflow::satprop}));
  CHECK_FALSE(detail::table_serves(f, Policy{.rounding = Rounding::rto}));
  CHECK_FALSE(detail::table_serves(f, Policy{.rounding = Rounding::sr, .random_bit_count = 3}));
  CHECK_FALSE(detail::table_serves(f, Policy{.subnormals = Subnormals::ftz}));
  CHECK_FALSE(detail::table_serves(f, Policy{.nan = NanConvention::canonical}));
  CHECK_FALSE(detail::table_serves(formats::e4m3, Policy{}));
}
