// The SIMD batch conversion float32 -> 8/16-bit format (and tf32, fp32 and
// fp64), compiled for AVX-512 and AVX2 and picked at run time (Highway;
// other CPUs take the core). It is an
// optimisation of round_to_format and nothing else: every vector holding a
// value it does not serve (NaN, infinity, some float32 subnormals) is
// converted by the core instead, and tests/batch proves it bit for bit and
// flag count for flag count against the core on all 2^32 inputs.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "batch/convert_plan.hpp"
#include "fmtcheck/core/flags.hpp"
#include "fmtcheck/core/random.hpp"
#include "fmtcheck/core/round_to_format.hpp"
#include "fmtcheck/core/unpacked.hpp"

namespace fmtcheck::detail {

// Values the core takes a run at a time where they round alike.
inline constexpr std::size_t kCoreRun = 64;
inline constexpr int kCoreRunBits = 6;  // log2(kCoreRun)
static_assert(std::size_t{1} << kCoreRunBits == kCoreRun);

// Whether the Rounder gives each of the kCoreRun values at `in` the result
// of the first, `first` (in[0] unpacked): they lie in one binade of normal
// float32 numbers (one sign and exponent field, neither 0 nor 255) and
// either the Rounder shares one result for that binade (far below the
// format's subnormals or beyond its range: Rounder::shared_result), or
// they differ only in their last kCoreRunBits mantissa bits, which it says
// decide nothing (Rounder::shares_low_bits: below the rounding position,
// on one side of half). In a float32 unpacked, those bits are the
// significand's lowest 40 + kCoreRunBits. Inputs in order, as a sweep's
// are, lie mostly in such runs; random data leaves the first value's
// binade at once, so the first comparison decides most of its runs.
inline bool run_rounds_alike(const Rounder& round, const Unpacked& first, const float* in) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(in[0]);
  const std::uint32_t field = (bits >> 23) & 0xFF;
  if (field == 0 || field == 0xFF) return false;
  int same_above = 23;  // sign and exponent field
  if (round.shared_result(first) == nullptr) {
    if (!round.shares_low_bits(first, 40 + kCoreRunBits)) return false;
    same_above = kCoreRunBits;
  }
  for (std::size_t i = 1; i < kCoreRun; ++i) {
    if (std::bit_cast<std::uint32_t>(in[i]) >> same_above != bits >> same_above) return false;
  }
  return true;
}

// The core, value by value: every pair the kernel does not serve, and every
// value it does not take. draw(i) gives value i's random bits; it is called
// only under stochastic rounding.
template <typename Out, typename Draw>
void convert_with_core(const Format& f, const Policy& p, const float* in, std::size_t n, Out* out, Draw draw,
                       FlagCounts* counts) {
  if (n == 0) return;  // a kernel's usual empty remainder: no Rounder to derive
  const Rounder round(f, p);
  const bool stochastic = is_stochastic(p.rounding);
  const auto random_bits = [&](std::size_t i) { return stochastic ? draw(i) : p.random_bits; };
  const auto convert = [&](std::size_t i) {
    const Conversion c = round(unpack(in[i]), random_bits(i));
    out[i] = static_cast<Out>(c.bits);
    return c.flags;
  };
  // A long batch counts its values by flag combination and adds each
  // combination's count once at the end: FlagCounts::add per value (ten
  // counters, in memory `out` may alias) would take half of this loop's time. A
  // kernel's few leftover values would not repay clearing the 8 KiB table.
  constexpr std::size_t kTableWorthIt = 1024;
  if (n < kTableWorthIt) {
    for (std::size_t i = 0; i < n; ++i) counts->add(convert(i));
    return;
  }
  std::array<std::uint64_t, std::size_t{1} << flag_count> by_flags{};
  std::size_t i = 0;
  for (; i + kCoreRun <= n; i += kCoreRun) {
    const Unpacked first = unpack(in[i]);
    const Conversion c = round(first, random_bits(i));
    if (run_rounds_alike(round, first, in + i)) {
      std::fill_n(out + i, kCoreRun, static_cast<Out>(c.bits));
      by_flags[c.flags.bits()] += kCoreRun;
    } else {
      out[i] = static_cast<Out>(c.bits);
      ++by_flags[c.flags.bits()];
      for (std::size_t j = i + 1; j < i + kCoreRun; ++j) ++by_flags[convert(j).bits()];
    }
  }
  for (; i < n; ++i) ++by_flags[convert(i).bits()];
  for (std::size_t bits = 0; bits < by_flags.size(); ++bits) {
    if (by_flags[bits] != 0) counts->add(Flags(static_cast<std::uint16_t>(bits)), by_flags[bits]);
  }
}

// The same for the kernel's own values: `first` is in[0]'s position in the
// batch, whose draws the stream gives.
template <typename Out>
void convert_with_core(const ConvertPlan& plan, const float* in, std::size_t n, Out* out, const RandomStream* stream,
                       std::size_t first, FlagCounts* counts) {
  convert_with_core(*plan.format, *plan.policy, in, n, out, [&](std::size_t i) { return stream->draw(first + i); },
                    counts);
}

// The kernel as one SIMD target compiled it: AVX-512 or AVX2, the two CI
// proves on every input.
struct KernelTarget {
  using ToU8 = void(const ConvertPlan&, const float*, std::size_t, std::uint8_t*, const RandomStream*, FlagCounts*);
  using ToU16 = void(const ConvertPlan&, const float*, std::size_t, std::uint16_t*, const RandomStream*,
                     FlagCounts*);
  using ToU32 = void(const ConvertPlan&, const float*, std::size_t, std::uint32_t*, const RandomStream*,
                     FlagCounts*);
  using ToU64 = void(const ConvertPlan&, const float*, std::size_t, std::uint64_t*, const RandomStream*,
                     FlagCounts*);
  std::int64_t target;  // Highway's bit for it: hwy::TargetName(target) names it
  ToU8* to_u8;
  ToU16* to_u16;
  ToU32* to_u32;
  ToU64* to_u64;
};
// The targets compiled in that this CPU runs, best first.
std::vector<KernelTarget> kernel_targets();
// The first of them, the one convert_batch runs; null on a CPU without
// AVX2, where every value goes to the core.
const KernelTarget* best_kernel_target();

// Runs the kernel of `target` on n values. stream: stochastic rounding's
// draws, required when the policy rounds stochastically (the kernel serves
// no other source of draws), ignored otherwise. Adds to *counts.
void convert_float32_fast(const KernelTarget& target, const ConvertPlan& plan, const float* in, std::size_t n,
                          std::uint8_t* out, const RandomStream* stream, FlagCounts* counts);
void convert_float32_fast(const KernelTarget& target, const ConvertPlan& plan, const float* in, std::size_t n,
                          std::uint16_t* out, const RandomStream* stream, FlagCounts* counts);
void convert_float32_fast(const KernelTarget& target, const ConvertPlan& plan, const float* in, std::size_t n,
                          std::uint32_t* out, const RandomStream* stream, FlagCounts* counts);
void convert_float32_fast(const KernelTarget& target, const ConvertPlan& plan, const float* in, std::size_t n,
                          std::uint64_t* out, const RandomStream* stream, FlagCounts* counts);

}  // namespace fmtcheck::detail
