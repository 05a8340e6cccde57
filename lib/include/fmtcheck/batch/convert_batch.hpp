// Whole tensors of float32 converted into any format: the result of every
// value is round_to_format's, computed by a SIMD kernel where one serves the
// format and policy (proven on every float32 input), else by the core.
#pragma once

#include <cstdint>
#include <span>

#include "fmtcheck/core/flags.hpp"
#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/policy.hpp"
#include "fmtcheck/core/random.hpp"

namespace fmtcheck {

// Batch conversion of float32 values: writes the container bits of `to`
// (the element width must equal to.storage_bits) and returns the count of
// each flag. With stochastic rounding, `random` supplies one draw per value
// (policy.random_bits is then ignored).
FlagCounts convert_batch(std::span<const float> in, const Format& to, const Policy& p,
                         std::span<std::uint8_t> out, std::span<const std::uint32_t> random = {});
FlagCounts convert_batch(std::span<const float> in, const Format& to, const Policy& p,
                         std::span<std::uint16_t> out, std::span<const std::uint32_t> random = {});
FlagCounts convert_batch(std::span<const float> in, const Format& to, const Policy& p,
                         std::span<std::uint32_t> out, std::span<const std::uint32_t> random = {});
FlagCounts convert_batch(std::span<const float> in, const Format& to, const Policy& p,
                         std::span<std::uint64_t> out, std::span<const std::uint32_t> random = {});

// The same with stochastic rounding's draws from a counter-based generator
// (RandomStream), computed inside the SIMD kernel where it serves the pair.
FlagCounts convert_batch(std::span<const float> in, const Format& to, const Policy& p,
                         std::span<std::uint8_t> out, RandomStream draws);
FlagCounts convert_batch(std::span<const float> in, const Format& to, const Policy& p,
                         std::span<std::uint16_t> out, RandomStream draws);
FlagCounts convert_batch(std::span<const float> in, const Format& to, const Policy& p,
                         std::span<std::uint32_t> out, RandomStream draws);
FlagCounts convert_batch(std::span<const float> in, const Format& to, const Policy& p,
                         std::span<std::uint64_t> out, RandomStream draws);

}  // namespace fmtcheck
