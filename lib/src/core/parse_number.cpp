// Numeric text -> exact unpacked value, through the one parser in
// exact_value.cpp, so a decimal string is rounded once, by the rounding core,
// never through double.
#include "fmtcheck/core/parse_number.hpp"

#include "fmtcheck/core/exact_value.hpp"

namespace fmtcheck {

std::optional<Unpacked> parse_number(std::string_view text, std::string* error) {
  const auto value = ExactValue::parse(text, error);
  if (!value) return std::nullopt;
  return value->to_unpacked();
}

}  // namespace fmtcheck
