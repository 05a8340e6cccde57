// Exact rationals behind ExactValue (Boost.Multiprecision), and the one
// parser of numeric text.
#include "fmtcheck/core/exact_value.hpp"

#include <algorithm>
#include <bit>
#include <boost/multiprecision/cpp_int.hpp>
#include <cctype>
#include <stdexcept>

#include "fmtcheck/core/round_to_format.hpp"

namespace fmtcheck {

using boost::multiprecision::cpp_int;
using boost::multiprecision::cpp_rational;

struct ExactValue::Impl {
  Kind kind = Kind::finite;
  bool sign = false;
  cpp_rational magnitude;  // finite: |value|
};

namespace {

// Beyond these decimal (or binary) magnitudes every supported format either
// overflows or sees a nonzero value far below half its smallest subnormal
// (fp64's is 2^-1075 ~ 2.5e-324), so the value is kept only as "huge" or
// "tiny" instead of building enormous integers.
constexpr std::int64_t kMaxDecimalMagnitude = 400;
constexpr std::int64_t kMaxBinaryMagnitude = 1300;
constexpr std::int32_t kBeyondExponent = 1 << 20;

// n * 2^e for n > 0, as 64 significant bits plus sticky.
Unpacked normalise(const cpp_int& n, std::int64_t e) {
  Unpacked x;
  x.kind = Unpacked::Kind::finite;
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

// Reads [+-]digits, clamping absurd exponents (they only mean huge or tiny).
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

int digit_value(char c, int base) {
  if (c >= '0' && c <= '9') return c - '0';
  if (base == 16 && c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

}  // namespace

ExactValue::ExactValue(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ExactValue::ExactValue(const ExactValue& o) : impl_(std::make_unique<Impl>(*o.impl_)) {}
ExactValue& ExactValue::operator=(const ExactValue& o) {
  impl_ = std::make_unique<Impl>(*o.impl_);
  return *this;
}
ExactValue::ExactValue(ExactValue&&) noexcept = default;
ExactValue& ExactValue::operator=(ExactValue&&) noexcept = default;
ExactValue::~ExactValue() = default;

ExactValue::Kind ExactValue::kind() const { return impl_->kind; }
bool ExactValue::sign() const { return impl_->sign; }
bool ExactValue::is_zero() const { return impl_->kind == Kind::finite && impl_->magnitude == 0; }

std::optional<ExactValue> ExactValue::parse(std::string_view text, std::string* error) {
  const std::string original(text);
  auto fail = [&](const std::string& why) -> std::optional<ExactValue> {
    if (error) *error = "malformed number '" + original + "': " + why;
    return std::nullopt;
  };
  if (const std::size_t slash = text.find('/'); slash != std::string_view::npos) {
    return parse_fraction(text.substr(0, slash), text.substr(slash + 1), error);
  }
  auto impl = std::make_unique<Impl>();
  std::string s(text);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    impl->sign = s.front() == '-';
    s.erase(0, 1);
  }
  if (s == "inf" || s == "infinity" || s == "nan") {
    impl->kind = s == "nan" ? Kind::nan : Kind::inf;
    return ExactValue(std::move(impl));
  }

  int base = 10;
  if (s.size() > 2 && s[0] == '0' && s[1] == 'x') {
    base = 16;
    s.erase(0, 2);
  }
  const auto exp_pos = s.find(base == 10 ? 'e' : 'p');
  std::int64_t exp = 0;
  if (exp_pos != std::string::npos) {
    if (!read_exponent(std::string_view(s).substr(exp_pos + 1), exp)) return fail("bad exponent");
  } else if (base == 16) {
    return fail("a hex float needs a p exponent, as in 0x1.8p-3");
  }

  cpp_int n = 0;
  std::int64_t significant_digits = 0;
  std::int64_t frac_digits = 0;
  bool seen_point = false;
  bool seen_digit = false;
  for (char c : std::string_view(s).substr(0, exp_pos)) {
    if (c == '.') {
      if (seen_point) return fail("two decimal points");
      seen_point = true;
      continue;
    }
    const int d = digit_value(c, base);
    if (d < 0) return fail(std::string("unexpected '") + c + "'");
    seen_digit = true;
    n = n * base + d;
    if (n != 0) ++significant_digits;
    if (seen_point) ++frac_digits;
  }
  if (!seen_digit) return fail("no digits");
  if (n == 0) return ExactValue(std::move(impl));

  // value = n * base^e with the value below base^magnitude.
  const std::int64_t scale = base == 16 ? 4 : 1;
  const std::int64_t e = exp - scale * frac_digits;
  const std::int64_t magnitude = e + scale * significant_digits;
  const std::int64_t limit = base == 16 ? kMaxBinaryMagnitude : kMaxDecimalMagnitude;
  if (magnitude > limit || magnitude < -limit) {
    impl->kind = magnitude > 0 ? Kind::beyond_huge : Kind::beyond_tiny;
    return ExactValue(std::move(impl));
  }
  const cpp_int radix = base == 16 ? 2 : 10;
  const auto power = static_cast<unsigned>(e < 0 ? -e : e);
  const cpp_int p = boost::multiprecision::pow(radix, power);
  impl->magnitude = e >= 0 ? cpp_rational(n * p) : cpp_rational(n, p);
  return ExactValue(std::move(impl));
}

// p/q: each side a number of its own, the quotient exact (1/3 is rounded
// once, by the format, like 0.1). The sides must be finite and within the
// parser's 1e-400..1e400; so must be the quotient, or it is kept as "huge"
// or "tiny" like any such number.
std::optional<ExactValue> ExactValue::parse_fraction(std::string_view p, std::string_view q, std::string* error) {
  const std::string text = std::string(p) + "/" + std::string(q);
  auto fail = [&](const std::string& why) -> std::optional<ExactValue> {
    if (error) *error = "malformed number '" + text + "': " + why;
    return std::nullopt;
  };
  if (q.find('/') != std::string_view::npos) return fail("more than one '/'");
  const auto numerator = parse(p, error);
  if (!numerator) return std::nullopt;  // the error names the side
  const auto divisor = parse(q, error);
  if (!divisor) return std::nullopt;
  if (numerator->kind() != Kind::finite || divisor->kind() != Kind::finite) {
    return fail("a fraction takes finite numbers between 1e-400 and 1e400");
  }
  if (divisor->is_zero()) return fail("division by zero");
  if (numerator->is_zero()) {
    ExactValue zero = *numerator;
    zero.impl_->sign = numerator->sign() != divisor->sign();
    return zero;
  }
  ExactValue quotient = ExactValue::quotient(*numerator, *divisor);
  static const cpp_int limit = boost::multiprecision::pow(cpp_int(10), static_cast<unsigned>(kMaxDecimalMagnitude));
  static const cpp_rational huge(limit), tiny(cpp_int(1), limit);
  if (quotient.impl_->magnitude > huge) quotient.impl_->kind = Kind::beyond_huge;
  if (quotient.impl_->magnitude < tiny) quotient.impl_->kind = Kind::beyond_tiny;
  return quotient;
}

ExactValue ExactValue::from_unpacked(const Unpacked& x) {
  auto impl = std::make_unique<Impl>();
  impl->sign = x.sign;
  switch (x.kind) {
    case Unpacked::Kind::zero: break;
    case Unpacked::Kind::inf: impl->kind = Kind::inf; break;
    case Unpacked::Kind::nan: impl->kind = Kind::nan; break;
    case Unpacked::Kind::finite: {
      if (x.sticky) throw std::invalid_argument("ExactValue::from_unpacked: the value is not exact (sticky bit set)");
      const std::int64_t e = static_cast<std::int64_t>(x.exponent) - 63;
      const cpp_int p = cpp_int(1) << static_cast<unsigned>(e < 0 ? -e : e);
      impl->magnitude = e >= 0 ? cpp_rational(cpp_int(x.significand) * p) : cpp_rational(cpp_int(x.significand), p);
      break;
    }
  }
  return ExactValue(std::move(impl));
}

ExactValue ExactValue::from_bits(const Format& f, std::uint64_t bits) { return from_unpacked(unpack(f, bits)); }

Unpacked ExactValue::to_unpacked() const {
  Unpacked x;
  x.sign = impl_->sign;
  switch (impl_->kind) {
    case Kind::inf: x.kind = Unpacked::Kind::inf; return x;
    case Kind::nan:
      x.kind = Unpacked::Kind::nan;
      x.significand = std::uint64_t{1} << 63;  // quiet, no payload
      return x;
    case Kind::beyond_huge:
    case Kind::beyond_tiny:
      x.kind = Unpacked::Kind::finite;
      x.exponent = impl_->kind == Kind::beyond_huge ? kBeyondExponent : -kBeyondExponent;
      x.significand = std::uint64_t{1} << 63;
      x.sticky = true;
      return x;
    case Kind::finite: break;
  }
  if (impl_->magnitude == 0) {
    x.kind = Unpacked::Kind::zero;
    return x;
  }
  // Scale the quotient to at least 65 bits so the sticky bit only has to
  // record a nonzero remainder.
  const cpp_int num = numerator(impl_->magnitude);
  const cpp_int den = denominator(impl_->magnitude);
  const auto nb = static_cast<std::int64_t>(boost::multiprecision::msb(num));
  const auto db = static_cast<std::int64_t>(boost::multiprecision::msb(den));
  const std::int64_t s = std::max<std::int64_t>(0, 65 + db - nb);
  cpp_int q;
  cpp_int r;
  boost::multiprecision::divide_qr(cpp_int(num << static_cast<unsigned>(s)), den, q, r);
  Unpacked u = normalise(q, -s);
  u.sign = impl_->sign;
  u.sticky = u.sticky || r != 0;
  return u;
}

double ExactValue::to_double() const {
  const Conversion c = round_to_format(to_unpacked(), formats::fp64, Policy{});
  return std::bit_cast<double>(c.bits);
}

ExactValue ExactValue::abs_difference(const ExactValue& a, const ExactValue& b) {
  if (a.kind() != Kind::finite || b.kind() != Kind::finite) {
    throw std::invalid_argument("ExactValue::abs_difference needs finite values");
  }
  const cpp_rational va = a.impl_->sign ? cpp_rational(-a.impl_->magnitude) : a.impl_->magnitude;
  const cpp_rational vb = b.impl_->sign ? cpp_rational(-b.impl_->magnitude) : b.impl_->magnitude;
  auto impl = std::make_unique<Impl>();
  impl->magnitude = boost::multiprecision::abs(cpp_rational(va - vb));
  return ExactValue(std::move(impl));
}

std::optional<ExactValue> ExactValue::relative_difference(const ExactValue& a, const ExactValue& b) {
  if (b.is_zero()) return std::nullopt;
  return quotient(abs_difference(a, b), b);
}

ExactValue ExactValue::quotient(const ExactValue& a, const ExactValue& b) {
  if (a.kind() != Kind::finite || b.kind() != Kind::finite || b.is_zero()) {
    throw std::invalid_argument("ExactValue::quotient needs finite values and a nonzero divisor");
  }
  auto impl = std::make_unique<Impl>();
  impl->sign = a.impl_->sign != b.impl_->sign;
  impl->magnitude = a.impl_->magnitude / b.impl_->magnitude;
  return ExactValue(std::move(impl));
}

namespace {

cpp_rational signed_value(bool sign, const cpp_rational& magnitude) {
  return sign ? cpp_rational(-magnitude) : magnitude;
}

void assign_signed(const cpp_rational& value, bool& sign, cpp_rational& magnitude) {
  sign = value < 0;
  magnitude = sign ? cpp_rational(-value) : value;
}

}  // namespace

ExactValue ExactValue::difference(const ExactValue& a, const ExactValue& b) {
  if (a.kind() != Kind::finite || b.kind() != Kind::finite) {
    throw std::invalid_argument("ExactValue::difference needs finite values");
  }
  auto impl = std::make_unique<Impl>();
  assign_signed(signed_value(a.impl_->sign, a.impl_->magnitude) - signed_value(b.impl_->sign, b.impl_->magnitude),
                impl->sign, impl->magnitude);
  return ExactValue(std::move(impl));
}

ExactValue ExactValue::weighted_mean(const std::vector<ExactValue>& values, const std::vector<std::uint64_t>& weights) {
  if (values.size() != weights.size()) throw std::invalid_argument("ExactValue::weighted_mean: one weight per value");
  cpp_rational sum = 0;
  cpp_int total = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (values[i].kind() != Kind::finite) throw std::invalid_argument("ExactValue::weighted_mean needs finite values");
    sum += signed_value(values[i].impl_->sign, values[i].impl_->magnitude) * cpp_int(weights[i]);
    total += weights[i];
  }
  if (total == 0) throw std::invalid_argument("ExactValue::weighted_mean: the weights are all zero");
  auto impl = std::make_unique<Impl>();
  assign_signed(sum / total, impl->sign, impl->magnitude);
  return ExactValue(std::move(impl));
}

}  // namespace fmtcheck
