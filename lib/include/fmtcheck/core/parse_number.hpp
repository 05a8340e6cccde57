// Exact parsing of decimal, hex-float and fraction text.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "fmtcheck/core/unpacked.hpp"

namespace fmtcheck {

// Accepts [+-]digits[.digits][e[+-]digits], hex floats such as 0x1.8p-3,
// inf/infinity and nan (any case), and fractions of two finite numbers
// such as 1/3 (their exact quotient). The result is the exact value (64
// significant bits plus sticky). Returns nullopt and fills *error on
// malformed text.
std::optional<Unpacked> parse_number(std::string_view text, std::string* error = nullptr);

}  // namespace fmtcheck
