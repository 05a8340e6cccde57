// Conversions of one value from every source into any format (whole
// tensors: fmtcheck/batch/convert_batch.hpp).
#pragma once

#include <cstdint>
#include <string_view>

#include "fmtcheck/core/flags.hpp"
#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/policy.hpp"
#include "fmtcheck/core/round_to_format.hpp"

namespace fmtcheck {

Conversion convert(float x, const Format& to, const Policy& p = {});
Conversion convert(double x, const Format& to, const Policy& p = {});
// Container bits of format `from` (e.g. an fp16 0x3C00, or a float32's bits).
Conversion convert_bits(std::uint64_t bits, const Format& from, const Format& to, const Policy& p = {});
// An exact decimal, hex-float or fraction string, rounded once ("0.1" and
// "1/3" never go through double). Throws std::invalid_argument when the text is not a number.
Conversion convert_text(std::string_view text, const Format& to, const Policy& p = {});

}  // namespace fmtcheck
