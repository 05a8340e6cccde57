// Conversions from every source into any format, one value or a whole tensor.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "fmtcheck/flags.hpp"
#include "fmtcheck/format.hpp"
#include "fmtcheck/policy.hpp"
#include "fmtcheck/random.hpp"
#include "fmtcheck/round_to_format.hpp"

namespace fmtcheck {

Conversion convert(float x, const Format& to, const Policy& p = {});
Conversion convert(double x, const Format& to, const Policy& p = {});
// Container bits of format `from` (e.g. an fp16 0x3C00, or a float32's bits).
Conversion convert_bits(std::uint64_t bits, const Format& from, const Format& to, const Policy& p = {});
// An exact decimal or hex-float string, rounded once ("0.1" never goes through
// double). Throws std::invalid_argument when the text is not a number.
Conversion convert_text(std::string_view text, const Format& to, const Policy& p = {});

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
