// The SIMD batch conversion against the core, on every float32 input, for
// every (format, policy) the kernel serves: the bits of each value and the
// flag counts of each group of 32 values (two AVX-512 vectors, the 8-bit
// route's step, four AVX2 ones),
// so a wrong flag cannot hide behind a right one elsewhere in the tensor.
//
// The kernel is called through its internal entry point with the plan built
// once, one group at a time: what convert_batch runs, without re-deriving
// the plan 2^27 times. The core runs value by value through a Rounder, as
// the batch fallback does, with each input unpacked once for all the
// pairs of its container width. Under stochastic rounding input i (its bits) sits
// at position i of one RandomStream, whose draw(i) the core takes.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <new>
#include <vector>

#include "batch_convert_fast.hpp"
#include "batch_convert_plan.hpp"
#include "exhaustive.hpp"
#include "fmtcheck/convert.hpp"
#include "fmtcheck/random.hpp"

namespace {

using namespace fmtcheck;

constexpr std::uint32_t kGroup = 32;
constexpr std::uint32_t kBlock = 256;  // inputs per step of one thread: 8 KiB unpacked
constexpr std::uint64_t kSeed = 0x5EED2026;

// A group's ten flag counts (each at most 32) in 6-bit fields of one word:
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

// The served pairs of one container width, proven in one pass over the
// inputs: each input is unpacked once for all of them, in blocks small
// enough that the unpacked values stay in L1 while every pair reads them.
struct Pass {
  int storage_bits;
  std::vector<detail::ConvertPlan> plans;
};

std::vector<Pass> passes() {
  std::vector<Pass> list = {{16, {}}, {8, {}}};
  for (const auto& pair : detail::kernel_proven_pairs()) {
    // The pair must really take the kernel, or this proves nothing.
    const auto plan = detail::make_convert_plan(*pair.format, pair.policy);
    REQUIRE_MESSAGE(plan.has_value(), pair.format->name << " " << describe(pair.policy) << " takes no kernel");
    const auto pass = std::find_if(list.begin(), list.end(),
                                   [&](const Pass& p) { return p.storage_bits == pair.format->storage_bits; });
    REQUIRE(pass != list.end());
    pass->plans.push_back(*plan);
  }
  return list;
}

// Groups [first, last) of 32 consecutive float32 bit patterns, every plan of
// the pass; one Mismatches per plan.
template <typename Out>
std::vector<Mismatches> check_groups(const Pass& pass, std::uint64_t first, std::uint64_t last) {
  std::vector<Mismatches> bad(pass.plans.size());
  std::vector<Rounder> rounders;
  for (const auto& plan : pass.plans) rounders.emplace_back(*plan.format, *plan.policy);
  const auto& table = packed_flags();
  std::array<float, kBlock> in;
  std::array<Unpacked, kBlock> unpacked;
  std::array<Out, kBlock> fast, halves;
  for (std::uint64_t block = first; block < last; block += kBlock / kGroup) {
    const std::uint64_t groups = std::min<std::uint64_t>(kBlock / kGroup, last - block);
    for (std::uint32_t i = 0; i < groups * kGroup; ++i) {
      in[i] = std::bit_cast<float>(static_cast<std::uint32_t>(block * kGroup + i));
      // Built in place: a copy of the returned struct reads it back across
      // the separate stores that wrote it, which the CPU cannot forward
      // (measured: three quarters of this loop's time).
      ::new (&unpacked[i]) Unpacked(unpack(in[i]));
    }
    for (std::size_t k = 0; k < pass.plans.size(); ++k) {
      const detail::ConvertPlan& plan = pass.plans[k];
      const bool stochastic = plan.policy->rounding == Rounding::sr;
      for (std::uint32_t g = 0; g < groups; ++g) {
        const std::uint64_t first_input = (block + g) * kGroup;
        const RandomStream stream{kSeed, first_input};
        FlagCounts fast_counts;
        detail::convert_float32_fast(plan, &in[g * kGroup], kGroup, &fast[g * kGroup],
                                     stochastic ? &stream : nullptr, &fast_counts);
        // The 8-bit route through fp16 takes two vectors at a time and
        // leaves a last single one to the float32 route: the kernel runs
        // again on each half of the group (one AVX-512 vector), so that
        // every input goes both ways. It serves no stochastic rounding.
        FlagCounts half_counts;
        if (plan.via_fp16) {
          for (std::uint32_t h = g * kGroup; h < (g + 1) * kGroup; h += kGroup / 2) {
            detail::convert_float32_fast(plan, &in[h], kGroup / 2, &halves[h], nullptr, &half_counts);
          }
        }
        std::uint64_t core_counts = 0;
        bool same = true;
        for (std::uint32_t i = g * kGroup; i < (g + 1) * kGroup; ++i) {
          const std::uint32_t random_bits = stochastic ? RandomStream{kSeed, 0}.draw(block * kGroup + i) : 0;
          const Conversion c = rounders[k](unpacked[i], random_bits);
          core_counts += table[c.flags.bits()];
          same = same && fast[i] == c.bits && (!plan.via_fp16 || halves[i] == c.bits);
        }
        if (plan.via_fp16) same = same && half_counts.values == kGroup && packed(half_counts) == core_counts;
        if (!same || fast_counts.values != kGroup || packed(fast_counts) != core_counts) {
          if (bad[k].first_inputs.size() < 8) bad[k].first_inputs.push_back(static_cast<std::uint32_t>(first_input));
          ++bad[k].groups;
        }
      }
    }
  }
  return bad;
}

// All 2^27 groups, split over every core.
std::vector<Mismatches> check_every_input(const Pass& pass) {
  std::vector<Mismatches> all(pass.plans.size());
  std::mutex mutex;
  testing::split_over_cores((std::uint64_t{1} << 32) / kGroup, [&](unsigned, std::uint64_t begin, std::uint64_t end) {
    const std::vector<Mismatches> mine = pass.storage_bits == 8
                                             ? check_groups<std::uint8_t>(pass, begin, end)
                                             : check_groups<std::uint16_t>(pass, begin, end);
    const std::lock_guard lock(mutex);
    for (std::size_t k = 0; k < all.size(); ++k) {
      all[k].groups += mine[k].groups;
      all[k].first_inputs.insert(all[k].first_inputs.end(), mine[k].first_inputs.begin(), mine[k].first_inputs.end());
    }
  });
  for (auto& m : all) std::sort(m.first_inputs.begin(), m.first_inputs.end());
  return all;
}

}  // namespace

TEST_CASE("batch float32 conversion kernel == round_to_format on all 2^32 inputs, every served format and policy") {
  for (const Pass& pass : passes()) {
    const auto start = std::chrono::steady_clock::now();
    const std::vector<Mismatches> bad = check_every_input(pass);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("%d-bit formats: %zu pairs x 2^32 inputs in %.1f s\n", pass.storage_bits, pass.plans.size(), seconds);
    std::fflush(stdout);
    for (std::size_t k = 0; k < pass.plans.size(); ++k) {
      CAPTURE(pass.plans[k].format->name);
      CAPTURE(describe(*pass.plans[k].policy));
      CHECK(bad[k].groups == 0);
      for (const std::uint32_t first : bad[k].first_inputs) {
        MESSAGE("group starting at float32 bits 0x" << std::hex << first << " differs");
      }
    }
  }
}
