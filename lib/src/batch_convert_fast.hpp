// The SIMD batch conversion float32 -> 8/16-bit format (and tf32, fp32 and
// fp64), compiled for every x86-64 level (SSE2 .. AVX-512) and picked at run
// time by Highway. It is an
// optimisation of round_to_format and nothing else: every vector holding a
// value it does not serve (NaN, infinity, some float32 subnormals) is
// converted by the core instead, and tests/speed proves it bit for bit and
// flag count for flag count against the core on all 2^32 inputs.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "batch_convert_plan.hpp"
#include "fmtcheck/flags.hpp"
#include "fmtcheck/random.hpp"
#include "fmtcheck/round_to_format.hpp"
#include "fmtcheck/unpacked.hpp"

namespace fmtcheck::detail {

// The core, value by value: every pair the kernel does not serve, and every
// value it does not take. draw(i) gives value i's random bits; it is called
// only under stochastic rounding.
template <typename Out, typename Draw>
void convert_with_core(const Format& f, const Policy& p, const float* in, std::size_t n, Out* out, Draw draw,
                       FlagCounts* counts) {
  if (n == 0) return;  // a kernel's usual empty remainder: no Rounder to derive
  const Rounder round(f, p);
  const bool stochastic = p.rounding == Rounding::sr;
  const auto convert = [&](std::size_t i) {
    const Conversion c = round(unpack(in[i]), stochastic ? draw(i) : p.random_bits);
    out[i] = static_cast<Out>(c.bits);
    return c.flags;
  };
  // A long batch counts its values by flag combination and adds each
  // combination's count once at the end: FlagCounts::add per value (ten
  // counters, in memory `out` may alias) was half of this loop's time. A
  // kernel's few leftover values would not repay clearing the 8 KiB table.
  constexpr std::size_t kTableWorthIt = 1024;
  if (n < kTableWorthIt) {
    for (std::size_t i = 0; i < n; ++i) counts->add(convert(i));
    return;
  }
  std::array<std::uint64_t, std::size_t{1} << flag_count> by_flags{};
  for (std::size_t i = 0; i < n; ++i) ++by_flags[convert(i).bits()];
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

// stream: stochastic rounding's draws, required when the policy rounds
// stochastically (the kernel serves no other source of draws), ignored
// otherwise. Adds to *counts.
void convert_float32_fast(const ConvertPlan& plan, const float* in, std::size_t n, std::uint8_t* out,
                          const RandomStream* stream, FlagCounts* counts);
void convert_float32_fast(const ConvertPlan& plan, const float* in, std::size_t n, std::uint16_t* out,
                          const RandomStream* stream, FlagCounts* counts);
void convert_float32_fast(const ConvertPlan& plan, const float* in, std::size_t n, std::uint32_t* out,
                          const RandomStream* stream, FlagCounts* counts);
void convert_float32_fast(const ConvertPlan& plan, const float* in, std::size_t n, std::uint64_t* out,
                          const RandomStream* stream, FlagCounts* counts);

// The kernel as one SIMD target compiled it. The functions above run the
// best target the CPU has; the exhaustive proof names the one it proves.
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
void convert_float32_fast(const KernelTarget& target, const ConvertPlan& plan, const float* in, std::size_t n,
                          std::uint8_t* out, const RandomStream* stream, FlagCounts* counts);
void convert_float32_fast(const KernelTarget& target, const ConvertPlan& plan, const float* in, std::size_t n,
                          std::uint16_t* out, const RandomStream* stream, FlagCounts* counts);
void convert_float32_fast(const KernelTarget& target, const ConvertPlan& plan, const float* in, std::size_t n,
                          std::uint32_t* out, const RandomStream* stream, FlagCounts* counts);
void convert_float32_fast(const KernelTarget& target, const ConvertPlan& plan, const float* in, std::size_t n,
                          std::uint64_t* out, const RandomStream* stream, FlagCounts* counts);

}  // namespace fmtcheck::detail
