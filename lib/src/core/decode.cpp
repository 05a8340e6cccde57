// Bits -> exact value as text (to_double is inline in the header).
#include "fmtcheck/core/decode.hpp"

#include <bit>
// cpp_int::str() assigns a one-character literal to a std::string, which
// g++ 12 flags with a false -Wrestrict inside libstdc++ (GCC bug 105329);
// the warning is off for what Boost inlines here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wrestrict"
#include <boost/multiprecision/cpp_int.hpp>
#pragma GCC diagnostic pop

namespace fmtcheck {

using boost::multiprecision::cpp_int;

std::string to_hex(const Format& f, std::uint64_t bits) {
  static const char digits[] = "0123456789abcdef";
  const int width = (f.storage_bits + 3) / 4;
  std::string s(static_cast<std::size_t>(width) + 2, '0');
  s[1] = 'x';
  for (int i = 0; i < width; ++i) s[s.size() - 1 - i] = digits[(bits >> (4 * i)) & 15];
  return s;
}

std::string to_exact_decimal(const Unpacked& x) {
  const std::string sign = x.sign ? "-" : "";
  switch (x.kind) {
    case Unpacked::Kind::zero: return sign + "0";
    case Unpacked::Kind::inf: return sign + "inf";
    case Unpacked::Kind::nan: return sign + "nan";
    case Unpacked::Kind::finite: break;
  }
  // value = odd * 2^k
  std::uint64_t sig = x.significand;
  const int tz = std::countr_zero(sig);
  sig >>= tz;
  const std::int64_t k = static_cast<std::int64_t>(x.exponent) - 63 + tz;
  if (k >= 0) {
    cpp_int v = cpp_int(sig) << static_cast<unsigned>(k);
    return sign + v.str();
  }
  // odd * 2^k = odd * 5^-k / 10^-k: the digits of odd * 5^-k with the
  // decimal point -k places from the right.
  cpp_int v = cpp_int(sig) * boost::multiprecision::pow(cpp_int(5), static_cast<unsigned>(-k));
  std::string digits = v.str();
  const auto frac = static_cast<std::size_t>(-k);
  if (digits.size() <= frac) digits.insert(0, frac - digits.size() + 1, '0');
  // One char at an iterator: inserting the string "." draws a false
  // -Wrestrict from g++ 12 inside std::string's replace.
  digits.insert(digits.end() - static_cast<std::ptrdiff_t>(frac), '.');
  return sign + digits;
}

std::string to_exact_decimal(const Format& f, std::uint64_t bits) { return to_exact_decimal(unpack(f, bits)); }

std::string to_binary_notation(const Unpacked& x) {
  if (x.kind != Unpacked::Kind::finite) return to_exact_decimal(x);
  std::uint64_t sig = x.significand;
  const int tz = std::countr_zero(sig);
  sig >>= tz;
  const std::int64_t k = static_cast<std::int64_t>(x.exponent) - 63 + tz;
  std::string s = x.sign ? "-" : "";
  if (k >= 0 && k < 20 && sig < (std::uint64_t{1} << 40)) return s + std::to_string(sig << k);
  if (sig != 1) s += std::to_string(sig) + "*";
  return s + "2^" + std::to_string(k);
}

}  // namespace fmtcheck
