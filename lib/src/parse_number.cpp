// Exact parsing of decimal and hex-float text with Boost.Multiprecision, so a
// decimal string is rounded once, by the rounding core, never through double.
#include "fmtcheck/parse_number.hpp"

#include <algorithm>
#include <boost/multiprecision/cpp_int.hpp>
#include <cctype>

namespace fmtcheck {
namespace {

using boost::multiprecision::cpp_int;

// Beyond these decimal (or binary) magnitudes every supported format either
// overflows or sees a nonzero value far below half its smallest subnormal
// (fp64's is 2^-1075 ~ 2.5e-324), so the value can be summarised exactly
// enough as "huge" or "tiny" without building enormous integers.
constexpr std::int64_t kMaxDecimalMagnitude = 400;
constexpr std::int64_t kMaxBinaryMagnitude = 1300;
constexpr std::int32_t kHugeExponent = 1 << 20;

std::optional<Unpacked> fail(std::string* error, std::string message) {
  if (error) *error = std::move(message);
  return std::nullopt;
}

Unpacked summary(bool sign, bool huge) {
  Unpacked x;
  x.kind = Unpacked::Kind::finite;
  x.sign = sign;
  x.exponent = huge ? kHugeExponent : -kHugeExponent;
  x.significand = std::uint64_t{1} << 63;
  x.sticky = true;
  return x;
}

// n * 2^e, n > 0, normalised to 64 bits plus sticky.
Unpacked from_integer_times_pow2(bool sign, const cpp_int& n, std::int64_t e) {
  Unpacked x;
  x.kind = Unpacked::Kind::finite;
  x.sign = sign;
  const auto msb = static_cast<std::int64_t>(boost::multiprecision::msb(n));
  if (msb >= 63) {
    const auto drop = static_cast<unsigned>(msb - 63);
    x.significand = static_cast<std::uint64_t>(n >> drop);
    x.sticky = drop > 0 && boost::multiprecision::lsb(n) < drop;
  } else {
    x.significand = static_cast<std::uint64_t>(n) << (63 - msb);
  }
  x.exponent = static_cast<std::int32_t>(msb + e);
  return x;
}

// n / d, both > 0, normalised to 64 bits plus sticky.
Unpacked from_quotient(bool sign, const cpp_int& n, const cpp_int& d) {
  const auto nb = static_cast<std::int64_t>(boost::multiprecision::msb(n));
  const auto db = static_cast<std::int64_t>(boost::multiprecision::msb(d));
  const std::int64_t s = std::max<std::int64_t>(0, 65 + db - nb);
  cpp_int q;
  cpp_int r;
  boost::multiprecision::divide_qr(cpp_int(n << static_cast<unsigned>(s)), d, q, r);
  Unpacked x = from_integer_times_pow2(sign, q, -s);
  x.sticky = x.sticky || r != 0;
  return x;
}

// Reads [+-]digits exponents, clamping absurd values (they only mean huge/tiny).
bool read_exponent(std::string_view s, std::int64_t& out) {
  bool neg = false;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    neg = s.front() == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return false;
  std::int64_t v = 0;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    v = std::min<std::int64_t>(v * 10 + (c - '0'), 1'000'000'000);
  }
  out = neg ? -v : v;
  return true;
}

bool is_digit(char c, int base) {
  return base == 10 ? std::isdigit(static_cast<unsigned char>(c)) != 0
                    : std::isxdigit(static_cast<unsigned char>(c)) != 0;
}
int digit_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  return std::tolower(static_cast<unsigned char>(c)) - 'a' + 10;
}

}  // namespace

std::optional<Unpacked> parse_number(std::string_view text, std::string* error) {
  const std::string original(text);
  std::string_view s = text;
  bool sign = false;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    sign = s.front() == '-';
    s.remove_prefix(1);
  }
  std::string lower(s);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower == "inf" || lower == "infinity") {
    Unpacked x;
    x.kind = Unpacked::Kind::inf;
    x.sign = sign;
    return x;
  }
  if (lower == "nan") {
    Unpacked x;
    x.kind = Unpacked::Kind::nan;
    x.sign = sign;
    x.significand = std::uint64_t{1} << 63;  // quiet, no payload
    return x;
  }

  int base = 10;
  if (lower.size() > 2 && lower[0] == '0' && lower[1] == 'x') {
    base = 16;
    lower.erase(0, 2);
  }
  const char exp_char = base == 10 ? 'e' : 'p';
  const auto exp_pos = lower.find(exp_char);
  const std::string mantissa = lower.substr(0, exp_pos);
  std::int64_t exp = 0;
  if (exp_pos != std::string::npos) {
    if (!read_exponent(std::string_view(lower).substr(exp_pos + 1), exp)) {
      return fail(error, "malformed number '" + original + "': bad exponent");
    }
  } else if (base == 16) {
    return fail(error, "malformed number '" + original + "': a hex float needs a p exponent, as in 0x1.8p-3");
  }

  cpp_int n = 0;
  std::int64_t digits = 0;       // significant digits read (after leading zeros)
  std::int64_t frac_digits = 0;  // digits after the point
  bool seen_point = false;
  bool seen_digit = false;
  for (char c : mantissa) {
    if (c == '.') {
      if (seen_point) return fail(error, "malformed number '" + original + "': two decimal points");
      seen_point = true;
      continue;
    }
    if (!is_digit(c, base)) {
      return fail(error, "malformed number '" + original + "': unexpected '" + std::string(1, c) + "'");
    }
    seen_digit = true;
    n = n * base + digit_value(c);
    if (n != 0) ++digits;
    if (seen_point) ++frac_digits;
  }
  if (!seen_digit) return fail(error, "malformed number '" + original + "': no digits");

  if (n == 0) {
    Unpacked x;
    x.kind = Unpacked::Kind::zero;
    x.sign = sign;
    return x;
  }
  if (base == 16) {
    const std::int64_t e2 = exp - 4 * frac_digits;
    const std::int64_t magnitude = e2 + 4 * digits;
    if (magnitude > kMaxBinaryMagnitude) return summary(sign, true);
    if (magnitude < -kMaxBinaryMagnitude) return summary(sign, false);
    return from_integer_times_pow2(sign, n, e2);
  }
  const std::int64_t e10 = exp - frac_digits;
  const std::int64_t magnitude = e10 + digits;  // value < 10^magnitude
  if (magnitude > kMaxDecimalMagnitude) return summary(sign, true);
  if (magnitude < -kMaxDecimalMagnitude) return summary(sign, false);
  if (e10 >= 0) {
    return from_integer_times_pow2(sign, n * boost::multiprecision::pow(cpp_int(10), static_cast<unsigned>(e10)), 0);
  }
  return from_quotient(sign, n, boost::multiprecision::pow(cpp_int(10), static_cast<unsigned>(-e10)));
}

}  // namespace fmtcheck
