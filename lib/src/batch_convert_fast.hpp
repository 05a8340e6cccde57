// The SIMD batch conversion float32 -> 8/16-bit format, compiled for every
// x86-64 level (SSE2 .. AVX-512) and picked at run time by Highway. It is an
// optimisation of round_to_format and nothing else: every vector holding a
// value it does not serve (NaN, infinity, some float32 subnormals) is
// converted by the core instead, and tests/speed proves it bit for bit and
// flag count for flag count against the core on all 2^32 inputs.
#pragma once

#include <cstddef>
#include <cstdint>

#include "batch_convert_plan.hpp"
#include "fmtcheck/flags.hpp"
#include "fmtcheck/random.hpp"

namespace fmtcheck::detail {

// stream: stochastic rounding's draws, required when the policy rounds
// stochastically (the kernel serves no other source of draws), ignored
// otherwise. Adds to *counts.
void convert_float32_fast(const ConvertPlan& plan, const float* in, std::size_t n, std::uint8_t* out,
                          const RandomStream* stream, FlagCounts* counts);
void convert_float32_fast(const ConvertPlan& plan, const float* in, std::size_t n, std::uint16_t* out,
                          const RandomStream* stream, FlagCounts* counts);

}  // namespace fmtcheck::detail
