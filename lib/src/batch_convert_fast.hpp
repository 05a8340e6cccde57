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

namespace fmtcheck::detail {

// random: one draw per value for stochastic rounding, or nullptr to use the
// policy's random_bits for every value. Adds to *counts.
void convert_float32_fast(const ConvertPlan& plan, const float* in, std::size_t n, std::uint8_t* out,
                          const std::uint32_t* random, FlagCounts* counts);
void convert_float32_fast(const ConvertPlan& plan, const float* in, std::size_t n, std::uint16_t* out,
                          const std::uint32_t* random, FlagCounts* counts);

}  // namespace fmtcheck::detail
