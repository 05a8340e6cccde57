// The IEEE P3109 binary8 family: 8-bit formats of precision P, signed or
// unsigned, finite or extended (with infinities), as the working group's
// interim report lays them out (gfloat's format_info_p3109 follows it too):
//
//   signed    P = 1..7: 8 - P exponent bits, bias 2^(7 - P); no negative
//             zero, its code 0x80 is the only NaN (fnuz's layout)
//   unsigned  P = 1..8: 9 - P exponent bits, bias 2^(8 - P); 0xFF is the
//             only NaN (fn's layout without a sign)
//   extended  the code below the NaN on each side is infinity: 0x7F/0xFF
//             signed, 0xFE unsigned
//
// Every member has subnormals; with P = 1 there are no mantissa bits and
// the exponent field 0 holds only zero.
#include <charconv>
#include <span>
#include <string>
#include <vector>

#include "fmtcheck/core/format.hpp"

namespace fmtcheck {
namespace {

bool read_precision(std::string_view& s, int& precision) {
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), precision);
  if (ec != std::errc() || ptr == s.data()) return false;
  s.remove_prefix(static_cast<std::size_t>(ptr - s.data()));
  return true;
}

}  // namespace

std::optional<Format> p3109_format(int precision, bool is_signed, bool extended) {
  if (precision < 1 || precision > (is_signed ? 7 : 8)) return std::nullopt;
  Format f;
  f.exponent_bits = p3109_exponent_bits(precision, is_signed);
  f.mantissa_bits = precision - 1;
  f.bias = 1 << (f.exponent_bits - 1);
  f.specials = is_signed ? Specials::fnuz : Specials::fn;
  f.is_signed = is_signed;
  f.extended = extended;
  f.storage_bits = 8;
  f.name = std::string("binary8p").append(std::to_string(precision)).append(is_signed ? "s" : "u").append(extended ? "e" : "f");
  return f;
}

std::span<const Format> p3109_formats() {
  static const std::vector<Format> all = [] {
    std::vector<Format> v;
    for (const bool is_signed : {true, false}) {
      for (const bool extended : {true, false}) {
        for (int p = 1; p <= 8; ++p) {
          if (auto f = p3109_format(p, is_signed, extended)) v.push_back(*f);
        }
      }
    }
    return v;
  }();
  return all;
}

// "binary8p<P>[s|u][e|f]" (the report's names; without the letters, the
// signed extended member, as the interim report's first binary8pP formats
// were) or gfloat's "p3109_k8p<P><s|u><e|f>".
std::optional<Format> parse_p3109_name(std::string_view lower) {
  std::string_view s = lower;
  bool letters_required = false;
  if (s.starts_with("binary8p")) {
    s.remove_prefix(8);
  } else if (s.starts_with("p3109_k8p")) {
    s.remove_prefix(9);
    letters_required = true;
  } else {
    return std::nullopt;
  }
  int precision = 0;
  if (!read_precision(s, precision)) return std::nullopt;
  if (s.empty() && !letters_required) return p3109_format(precision, true, true);
  if (s.size() != 2 || (s[0] != 's' && s[0] != 'u') || (s[1] != 'e' && s[1] != 'f')) return std::nullopt;
  return p3109_format(precision, s[0] == 's', s[1] == 'e');
}

}  // namespace fmtcheck
