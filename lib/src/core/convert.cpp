// Conversions of one value from every source: each one unpacks exactly and
// calls the rounding core once.
#include "fmtcheck/core/convert.hpp"

#include <stdexcept>
#include <string>

#include "fmtcheck/core/parse_number.hpp"

namespace fmtcheck {

Conversion convert(float x, const Format& to, const Policy& p) { return round_to_format(unpack(x), to, p); }
Conversion convert(double x, const Format& to, const Policy& p) { return round_to_format(unpack(x), to, p); }

Conversion convert_bits(std::uint64_t bits, const Format& from, const Format& to, const Policy& p) {
  return round_to_format(unpack(from, bits), to, p);
}

Conversion convert_text(std::string_view text, const Format& to, const Policy& p) {
  std::string error;
  const auto x = parse_number(text, &error);
  if (!x) throw std::invalid_argument(error);
  return round_to_format(*x, to, p);
}

}  // namespace fmtcheck
