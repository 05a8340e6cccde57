// The SIMD batch conversion against the core, on every float32 input, for
// every (format, policy) the kernel serves, on every SIMD target it is
// compiled for that the CPU runs (AVX-512 and AVX2): the bits of each
// value and the flag counts of each group of 512 values (32 AVX-512
// vectors, 64 AVX2 ones), so a wrong flag cannot hide behind a right one
// elsewhere in the tensor.
//
// The kernel is called through its internal per-target entry points with the
// plan built once, one group at a time: what convert_batch runs, without
// re-deriving the plan 2^24 times. The core runs once per value through a
// Rounder, as the batch fallback does, with each input unpacked once for all
// the pairs of its container width; every target is compared with that one
// result. A group whose values the Rounder says round alike (a binade
// beyond the format's range, far below its subnormals or negative into an
// unsigned format: Rounder::shared_result; or values inside the binades
// whose last 9 mantissa bits lie below the rounding position and on one
// side of half: Rounder::shares_low_bits) is compared with the first
// value's result in every value, without asking the core 512 times: most
// float32 inputs lie in such groups in every deterministic mode. Under
// stochastic rounding input i (its bits) sits at position i of one
// RandomStream, whose draw(i) the core takes.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "batch/convert_fast.hpp"
#include "batch/convert_plan.hpp"
#include "exhaustive.hpp"
#include "fmtcheck/core/convert.hpp"
#include "fmtcheck/core/random.hpp"
#include "hwy/targets.h"

namespace {

using namespace fmtcheck;

// Values per kernel call: each call costs about as much as converting 64
// values, and with most groups rounded alike the kernel, not the core, is
// the cost. Alone on 2 cores the proof takes 528 s with groups of 256,
// 353 s with 512 and 338 s with 1024, where a fifth of the runs inside
// fp16's and tf32's binades would hold the tie or the exact pattern.
constexpr std::uint32_t kGroup = 512;
// The significand bits a group's values differ in: a float32's 23 mantissa
// bits sit above 40 zero bits in an Unpacked, and a group frees the last 9.
constexpr int kGroupFreeBits = 40 + 9;
constexpr std::uint32_t kBlock = 512;  // inputs per step of one thread: 12 KiB unpacked
constexpr std::uint64_t kSeed = 0x5EED2026;

__extension__ typedef unsigned __int128 Packed;
constexpr int kFieldBits = 10;
static_assert(kGroup < (1u << kFieldBits) && flag_count * kFieldBits <= 128, "a group's counts must fit");

// A group's ten flag counts (each at most 512) in 10-bit fields of one
// 128-bit word: the core's side adds one table entry per value instead of
// ten counters.
Packed packed(const FlagCounts& counts) {
  Packed word = 0;
  for (int f = 0; f < flag_count; ++f) word |= static_cast<Packed>(counts.count[f]) << (kFieldBits * f);
  return word;
}
const std::array<Packed, 1u << flag_count>& packed_flags() {
  static const auto table = [] {
    std::array<Packed, 1u << flag_count> t{};
    for (std::uint32_t bits = 0; bits < t.size(); ++bits) {
      FlagCounts one;
      one.add(Flags(static_cast<std::uint16_t>(bits)));
      t[bits] = packed(one);
    }
    return t;
  }();
  return table;
}

struct Mismatches {
  std::uint64_t groups = 0;
  std::int64_t targets = 0;                 // Highway's bits of the targets that differ
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
  std::vector<Pass> list = {{16, {}}, {8, {}}, {32, {}}, {64, {}}};
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

// The targets whose kernel does not give the core's bits and flag counts
// on one group (0: every one does). Each target runs the whole group; for
// the 8-bit route through bf16 (two vectors at a time), the group also goes
// down the float32 route, which takes a batch's last single vector: the same
// kernel with that route switched off in its plan (float32_route), so every
// input goes both ways.
template <typename Out>
std::int64_t targets_differing(const std::vector<detail::KernelTarget>& targets, const detail::ConvertPlan& plan,
                               const detail::ConvertPlan& float32_route, const float* in, const RandomStream* stream,
                               const Out* core_bits, Packed core_counts) {
  const auto agrees = [&](const detail::KernelTarget& target, const detail::ConvertPlan& route) {
    std::array<Out, kGroup> fast;
    FlagCounts counts;
    detail::convert_float32_fast(target, route, in, kGroup, fast.data(), stream, &counts);
    return counts.values == kGroup && packed(counts) == core_counts && std::equal(fast.begin(), fast.end(), core_bits);
  };
  std::int64_t differing = 0;
  for (const detail::KernelTarget& target : targets) {
    if (!agrees(target, plan) || (plan.via_bf16 && !agrees(target, float32_route))) differing |= target.target;
  }
  return differing;
}

// Whether the group starting at this float32 bit pattern lies in one binade
// of normal numbers: its kGroup patterns differ only in the last mantissa
// bits, so they share sign and exponent field, and the field is neither
// 0 (zeros and subnormals, each of its own binade) nor 255 (infinities and
// NaNs). Where the Rounder shares one result among all such values
// (Rounder::shared_result), or says that the last kGroupFreeBits bits of
// their significands decide nothing (Rounder::shares_low_bits), the core's
// result for each of them is the first one's.
bool one_binade(std::uint64_t first_input) {
  static_assert((1u << 23) % kGroup == 0, "a group must not cross an exponent field");
  const auto field = static_cast<std::uint32_t>(first_input >> 23) & 0xFF;
  return field != 0 && field != 0xFF;
}

// Groups [first, last) of kGroup consecutive float32 bit patterns, every plan of
// the pass; one Mismatches per plan.
template <typename Out>
std::vector<Mismatches> check_groups(const Pass& pass, const std::vector<detail::KernelTarget>& targets,
                                     std::uint64_t first, std::uint64_t last) {
  std::vector<Mismatches> bad(pass.plans.size());
  std::vector<Rounder> rounders;
  std::vector<detail::ConvertPlan> float32_routes = pass.plans;
  for (auto& route : float32_routes) route.via_bf16 = false;
  for (const auto& plan : pass.plans) rounders.emplace_back(*plan.format, *plan.policy);
  const auto& table = packed_flags();
  std::array<float, kBlock> in;
  std::array<Unpacked, kBlock> unpacked;
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
        std::array<Out, kGroup> core_bits;
        Packed core_counts = 0;
        const Rounder& round = rounders[k];
        const Unpacked& first = unpacked[g * kGroup];
        const bool alike = one_binade(first_input) &&
                           (round.shared_result(first) != nullptr || round.shares_low_bits(first, kGroupFreeBits));
        for (std::uint32_t i = 0; i < (alike ? 1 : kGroup); ++i) {
          const std::uint32_t random_bits = stochastic ? RandomStream{kSeed, 0}.draw(first_input + i) : 0;
          const Conversion c = round(unpacked[g * kGroup + i], random_bits);
          core_bits[i] = static_cast<Out>(c.bits);
          core_counts += table[c.flags.bits()];
        }
        if (alike) {
          std::fill(core_bits.begin() + 1, core_bits.end(), core_bits[0]);
          core_counts *= kGroup;
        }
        const RandomStream stream{kSeed, first_input};
        const std::int64_t differing = targets_differing(targets, plan, float32_routes[k], &in[g * kGroup],
                                                         stochastic ? &stream : nullptr, core_bits.data(), core_counts);
        if (differing != 0) {
          bad[k].targets |= differing;
          if (bad[k].first_inputs.size() < 8) bad[k].first_inputs.push_back(static_cast<std::uint32_t>(first_input));
          ++bad[k].groups;
        }
      }
    }
  }
  return bad;
}

// All 2^24 groups, split over every core.
std::vector<Mismatches> check_every_input(const Pass& pass, const std::vector<detail::KernelTarget>& targets) {
  std::vector<Mismatches> all(pass.plans.size());
  std::mutex mutex;
  testing::split_over_cores((std::uint64_t{1} << 32) / kGroup, [&](unsigned, std::uint64_t begin, std::uint64_t end) {
    const auto check = [&](auto out) { return check_groups<decltype(out)>(pass, targets, begin, end); };
    const std::vector<Mismatches> mine = pass.storage_bits == 8    ? check(std::uint8_t{})
                                         : pass.storage_bits == 16 ? check(std::uint16_t{})
                                         : pass.storage_bits == 32 ? check(std::uint32_t{})
                                                                   : check(std::uint64_t{});
    const std::lock_guard lock(mutex);
    for (std::size_t k = 0; k < all.size(); ++k) {
      all[k].groups += mine[k].groups;
      all[k].targets |= mine[k].targets;
      all[k].first_inputs.insert(all[k].first_inputs.end(), mine[k].first_inputs.begin(), mine[k].first_inputs.end());
    }
  });
  for (auto& m : all) std::sort(m.first_inputs.begin(), m.first_inputs.end());
  return all;
}

// Highway's names of the targets among these bits.
std::string target_names(std::int64_t bits) {
  std::string names;
  for (const detail::KernelTarget& t : detail::kernel_targets()) {
    if ((bits & t.target) == 0) continue;
    // Appended piece by piece: g++ 12 warns on " " + std::string&& with a
    // false -Wrestrict inside std::string's insert.
    if (!names.empty()) names += " ";
    names += hwy::TargetName(t.target);
  }
  return names;
}

}  // namespace

TEST_CASE("batch float32 conversion kernel == round_to_format on all 2^32 inputs, every served format and policy") {
  // Every target the kernel is compiled for that the CPU runs: AVX-512 (the
  // one convert_batch runs where the CPU has it) and AVX2. CPUs without
  // AVX2 run no kernel, so nothing else needs proving.
  const std::vector<detail::KernelTarget> targets = detail::kernel_targets();
  if (targets.empty()) {
    MESSAGE("SKIPPED: this CPU has no AVX2, so convert_batch runs no kernel here");
    return;
  }
  std::int64_t all_targets = 0;
  for (const detail::KernelTarget& t : targets) all_targets |= t.target;
  std::printf("SIMD targets: %s\n", target_names(all_targets).c_str());
  for (const Pass& pass : passes()) {
    const auto start = std::chrono::steady_clock::now();
    const std::vector<Mismatches> bad = check_every_input(pass, targets);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("%d-bit formats: %zu pairs x 2^32 inputs in %.1f s\n", pass.storage_bits, pass.plans.size(), seconds);
    std::fflush(stdout);
    for (std::size_t k = 0; k < pass.plans.size(); ++k) {
      CAPTURE(pass.plans[k].format->name);
      CAPTURE(describe(*pass.plans[k].policy));
      CHECK(bad[k].groups == 0);
      if (bad[k].targets != 0) MESSAGE("differing targets: " << target_names(bad[k].targets));
      for (const std::uint32_t first : bad[k].first_inputs) {
        MESSAGE("group starting at float32 bits 0x" << std::hex << first << " differs");
      }
    }
  }
}
