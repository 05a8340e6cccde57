// C++ value types for the formats: fmtcheck::float16, bfloat16, tf32,
// float8_e4m3, ... behave like built-in floating-point types, with every
// operator rounded once through the library's arithmetic.
//
//   - The layout is a compile-time value (so std::numeric_limits is constexpr);
//     format() is the matching runtime Format.
//   - Every operator and conversion uses the type's policy P: rne by default;
//     the fp8 types saturate (Overflow::sat), as CUDA's __nv_fp8 types do
//     (__NV_SATFINITE). Operators drop the flags; call the functions of
//     arithmetic.hpp with T::format() and T::policy to get them.
//   - Conversions to and from float and double are explicit. to double is
//     exact; to float is exact for every type here (at most 24 bits' precision).
//   - A user format: basic_float<Layout{6, 9, 31}> (e6m9, IEEE-like).
#pragma once

#include <bit>
#include <cmath>
#include <compare>
#include <concepts>
#include <cstdint>
#include <functional>
#include <istream>
#include <limits>
#include <ostream>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "fmtcheck/arith/arithmetic.hpp"
#include "fmtcheck/core/decode.hpp"
#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/parse_number.hpp"
#include "fmtcheck/core/policy.hpp"
#include "fmtcheck/core/round_to_format.hpp"

namespace fmtcheck {

// A format's encoding as a compile-time value (Format itself holds a name).
struct Layout {
  int exponent_bits = 0;
  int mantissa_bits = 0;
  int bias = 0;
  Specials specials = Specials::ieee;
  bool is_signed = true;
  bool has_subnormals = true;
  int pad_bits = 0;
  bool extended = false;  // fn/fnuz with infinity above the largest finite (Format::extended)

  [[nodiscard]] constexpr int width() const { return (is_signed ? 1 : 0) + exponent_bits + mantissa_bits; }
  [[nodiscard]] constexpr std::uint64_t magnitude_mask() const {
    return (std::uint64_t{1} << (exponent_bits + mantissa_bits)) - 1;
  }
  [[nodiscard]] constexpr std::uint64_t sign_bit() const {
    return is_signed ? std::uint64_t{1} << (exponent_bits + mantissa_bits) : 0;
  }
  [[nodiscard]] constexpr std::uint64_t infinity_code() const {
    if (specials == Specials::fn) return magnitude_mask() - 1;
    if (specials == Specials::fnuz) return magnitude_mask();
    return magnitude_mask() & ~((std::uint64_t{1} << mantissa_bits) - 1);
  }
  [[nodiscard]] constexpr std::uint64_t max_finite_code() const {
    switch (specials) {
      case Specials::ieee: return infinity_code() - 1;
      case Specials::fn: return magnitude_mask() - 1 - (extended ? 1 : 0);
      case Specials::fnuz: return magnitude_mask() - (extended ? 1 : 0);
      case Specials::none: return magnitude_mask();
    }
    return 0;
  }
  // Exponent of the lowest normal binade, and of the largest finite value.
  [[nodiscard]] constexpr int min_exponent() const { return (has_subnormals ? 1 : 0) - bias; }
  [[nodiscard]] constexpr int max_exponent() const {
    return static_cast<int>(max_finite_code() >> mantissa_bits) - bias;
  }
  // The code of 2^e, for e from the smallest subnormal's exponent to max_exponent().
  [[nodiscard]] constexpr std::uint64_t power_of_two_code(int e) const {
    if (e >= min_exponent()) return static_cast<std::uint64_t>(e + bias) << mantissa_bits;
    return std::uint64_t{1} << (e - min_exponent() + mantissa_bits);
  }
  friend constexpr bool operator==(const Layout&, const Layout&) = default;
};

namespace layouts {
inline constexpr Layout fp32{8, 23, 127};
inline constexpr Layout tf32{8, 10, 127, Specials::ieee, true, true, 13};
inline constexpr Layout fp16{5, 10, 15};
inline constexpr Layout bf16{8, 7, 127};
inline constexpr Layout e4m3{4, 3, 7, Specials::fn};
inline constexpr Layout e5m2{5, 2, 15};
inline constexpr Layout e4m3fnuz{4, 3, 8, Specials::fnuz};
inline constexpr Layout e5m2fnuz{5, 2, 16, Specials::fnuz};
inline constexpr Layout e2m3{2, 3, 1, Specials::none};
inline constexpr Layout e3m2{3, 2, 3, Specials::none};
inline constexpr Layout e2m1{2, 1, 1, Specials::none};
inline constexpr Layout e8m0{8, 0, 127, Specials::fn, false, false};
// An IEEE P3109 binary8 member, laid out as p3109_format() lays it out.
constexpr Layout binary8(int precision, bool is_signed = true, bool extended = true) {
  const int e = p3109_exponent_bits(precision, is_signed);
  return Layout{e, precision - 1, 1 << (e - 1), is_signed ? Specials::fnuz : Specials::fn, is_signed, true, 0, extended};
}
}  // namespace layouts

// The preset with this layout, or a format named "eXmY" built from it.
Format format_of(const Layout& l);

namespace detail {
template <std::integral I>
Unpacked unpack_integer(I n) {
  Unpacked x;
  const bool negative = n < 0;
  const auto magnitude = negative ? std::uint64_t{0} - static_cast<std::uint64_t>(n) : static_cast<std::uint64_t>(n);
  if (magnitude == 0) return x;
  const int lz = std::countl_zero(magnitude);
  x.kind = Unpacked::Kind::finite;
  x.sign = negative;
  x.exponent = 63 - lz;
  x.significand = magnitude << lz;
  return x;
}
template <int Bits>
using storage_for = std::conditional_t<Bits <= 8, std::uint8_t,
                    std::conditional_t<Bits <= 16, std::uint16_t,
                    std::conditional_t<Bits <= 32, std::uint32_t, std::uint64_t>>>;
// The default NaN bits of a layout (positive, quiet).
constexpr std::uint64_t quiet_nan_code(const Layout& l) {
  switch (l.specials) {
    case Specials::ieee: return l.infinity_code() | (std::uint64_t{1} << (l.mantissa_bits - 1));
    case Specials::fn: return l.magnitude_mask();
    case Specials::fnuz: return l.sign_bit();
    case Specials::none: return 0;
  }
  return 0;
}
}  // namespace detail

template <Layout L, Policy P = Policy{}>
class basic_float {
 public:
  using storage_type = detail::storage_for<L.width() + L.pad_bits>;
  static constexpr Layout layout = L;
  static constexpr Policy policy = P;
  static const Format& format() {
    static const Format f = format_of(L);
    return f;
  }

  constexpr basic_float() = default;  // bits zero: +0 (the smallest value for E8M0)
  static constexpr basic_float from_bits(storage_type bits) {
    basic_float x;
    x.bits_ = bits;
    return x;
  }
  [[nodiscard]] constexpr storage_type bits() const { return bits_; }

  explicit basic_float(float x) : basic_float(round_to_format(unpack(x), format(), P)) {}
  explicit basic_float(double x) : basic_float(round_to_format(unpack(x), format(), P)) {}
  // Any integer, rounded once (a 64-bit integer may not fit in a double).
  template <std::integral I>
  explicit basic_float(I n) : basic_float(round_to_format(detail::unpack_integer(n), format(), P)) {}
  // The result of an operation (its flags are dropped).
  explicit basic_float(const Conversion& c) : bits_(static_cast<storage_type>(c.bits)) {}
  // Another value type, rounded once under this type's policy. This is the
  // only way between formats: mixed-format operands (bfloat16 + float16) do
  // not compile, because there is no format to promote to without choosing
  // (neither of fp16 and bf16 holds the other); convert one operand explicitly.
  template <Layout L2, Policy P2>
  explicit basic_float(basic_float<L2, P2> x)
      : basic_float(round_to_format(unpack(basic_float<L2, P2>::format(), x.bits()), format(), P)) {}

  explicit operator double() const { return to_double(format(), bits_); }
  explicit operator float() const { return static_cast<float>(to_double(format(), bits_)); }
  explicit operator bool() const { return !is_zero(); }

  // Exact decimal or hex text, rounded once.
  static basic_float from_text(std::string_view text) {
    std::string error;
    const auto x = parse_number(text, &error);
    if (!x) throw std::invalid_argument(error);
    return basic_float(round_to_format(*x, format(), P));
  }

  friend basic_float operator+(basic_float a, basic_float b) { return basic_float(add(format(), a.bits_, b.bits_, P)); }
  friend basic_float operator-(basic_float a, basic_float b) { return basic_float(sub(format(), a.bits_, b.bits_, P)); }
  friend basic_float operator*(basic_float a, basic_float b) { return basic_float(mul(format(), a.bits_, b.bits_, P)); }
  friend basic_float operator/(basic_float a, basic_float b) { return basic_float(div(format(), a.bits_, b.bits_, P)); }
  basic_float& operator+=(basic_float b) { return *this = *this + b; }
  basic_float& operator-=(basic_float b) { return *this = *this - b; }
  basic_float& operator*=(basic_float b) { return *this = *this * b; }
  basic_float& operator/=(basic_float b) { return *this = *this / b; }
  constexpr basic_float operator+() const { return *this; }
  // Negation is exact: it flips the sign bit, except where that bit means
  // something else (fnuz's zero stays zero; an unsigned format gives NaN).
  constexpr basic_float operator-() const {
    if constexpr (!L.is_signed) {
      return from_bits(static_cast<storage_type>(detail::quiet_nan_code(L) << L.pad_bits));
    } else {
      const std::uint64_t code = bits_ >> L.pad_bits;
      if (L.specials == Specials::fnuz && (code == 0 || code == L.sign_bit())) return *this;
      return from_bits(static_cast<storage_type>((code ^ L.sign_bit()) << L.pad_bits));
    }
  }

  friend bool operator==(basic_float a, basic_float b) { return compare(format(), a.bits_, b.bits_, P).order == 0; }
  friend std::partial_ordering operator<=>(basic_float a, basic_float b) {
    return compare(format(), a.bits_, b.bits_, P).order;
  }

  [[nodiscard]] bool is_nan() const { return classify(format(), bits_) == ValueClass::nan; }
  [[nodiscard]] bool is_inf() const { return classify(format(), bits_) == ValueClass::inf; }
  [[nodiscard]] bool is_zero() const { return classify(format(), bits_) == ValueClass::zero; }

 private:
  storage_type bits_ = 0;
};

// Math functions, found by argument-dependent lookup (Eigen's numext uses them).
template <Layout L, Policy P>
basic_float<L, P> sqrt(basic_float<L, P> x) {
  return basic_float<L, P>(sqrt(basic_float<L, P>::format(), x.bits(), P));
}
template <Layout L, Policy P>
basic_float<L, P> fma(basic_float<L, P> a, basic_float<L, P> b, basic_float<L, P> c) {
  return basic_float<L, P>(fma(basic_float<L, P>::format(), a.bits(), b.bits(), c.bits(), P));
}
template <Layout L, Policy P>
basic_float<L, P> abs(basic_float<L, P> x) {
  return x < basic_float<L, P>() ? -x : x;
}
template <Layout L, Policy P>
basic_float<L, P> min(basic_float<L, P> a, basic_float<L, P> b) {
  return basic_float<L, P>(minimum(basic_float<L, P>::format(), a.bits(), b.bits(), P));
}
template <Layout L, Policy P>
basic_float<L, P> max(basic_float<L, P> a, basic_float<L, P> b) {
  return basic_float<L, P>(maximum(basic_float<L, P>::format(), a.bits(), b.bits(), P));
}
template <Layout L, Policy P>
bool isnan(basic_float<L, P> x) { return x.is_nan(); }
template <Layout L, Policy P>
bool isinf(basic_float<L, P> x) { return x.is_inf(); }
template <Layout L, Policy P>
bool isfinite(basic_float<L, P> x) { return !x.is_nan() && !x.is_inf(); }

// Prints like a double with the stream's flags and precision; reads any
// decimal or hex-float text and rounds it once.
template <Layout L, Policy P>
std::ostream& operator<<(std::ostream& os, basic_float<L, P> x) {
  return os << static_cast<double>(x);
}
template <Layout L, Policy P>
std::istream& operator>>(std::istream& is, basic_float<L, P>& x) {
  std::string text;
  if (!(is >> text)) return is;
  try {
    x = basic_float<L, P>::from_text(text);
  } catch (const std::invalid_argument&) {
    is.setstate(std::ios::failbit);
  }
  return is;
}

inline constexpr Policy saturating{Rounding::rne, Overflow::sat};

using float32 = basic_float<layouts::fp32>;
using tf32 = basic_float<layouts::tf32>;
using float16 = basic_float<layouts::fp16>;
using bfloat16 = basic_float<layouts::bf16>;
using float8_e4m3 = basic_float<layouts::e4m3, saturating>;
using float8_e5m2 = basic_float<layouts::e5m2, saturating>;
using float8_e4m3fnuz = basic_float<layouts::e4m3fnuz, saturating>;
using float8_e5m2fnuz = basic_float<layouts::e5m2fnuz, saturating>;
using float6_e2m3 = basic_float<layouts::e2m3>;
using float6_e3m2 = basic_float<layouts::e3m2>;
using float4_e2m1 = basic_float<layouts::e2m1>;
using float8_e8m0 = basic_float<layouts::e8m0>;
// IEEE P3109 binary8pP (signed, extended unless told otherwise), e.g.
// binary8<3> for binary8p3se, binary8<4, true, false> for binary8p4sf.
template <int Precision, bool Signed = true, bool Extended = true, Policy P = Policy{}>
using binary8 = basic_float<layouts::binary8(Precision, Signed, Extended), P>;

}  // namespace fmtcheck

template <fmtcheck::Layout L, fmtcheck::Policy P>
struct std::hash<fmtcheck::basic_float<L, P>> {
  // Equal values hash equally: -0 hashes as +0.
  std::size_t operator()(fmtcheck::basic_float<L, P> x) const noexcept {
    return std::hash<std::uint64_t>{}(x.is_zero() ? 0 : x.bits());
  }
};

// Everything a generic numerical code asks of a floating-point type, derived
// from the layout (C's conventions: the min normal is 2^(min_exponent - 1)).
template <fmtcheck::Layout L, fmtcheck::Policy P>
class std::numeric_limits<fmtcheck::basic_float<L, P>> {
  using T = fmtcheck::basic_float<L, P>;
  using S = typename T::storage_type;
  static constexpr T code(std::uint64_t c) { return T::from_bits(static_cast<S>(c << L.pad_bits)); }
  static constexpr double pow2(int e) {
    double x = 1;
    for (; e > 0; --e) x *= 2;
    for (; e < 0; ++e) x /= 2;
    return x;
  }
  static constexpr double max_value =
      pow2(L.max_exponent()) *
      (1 + static_cast<double>(L.max_finite_code() & ((std::uint64_t{1} << L.mantissa_bits) - 1)) / pow2(L.mantissa_bits));
  static constexpr int floor_log10(double x) {
    int k = 0;
    for (; x >= 10; x /= 10) ++k;
    for (; x < 1; x *= 10) --k;
    return k;
  }

 public:
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = L.is_signed;
  static constexpr bool is_integer = false;
  static constexpr bool is_exact = false;
  static constexpr bool has_infinity = L.specials == fmtcheck::Specials::ieee || L.extended;
  static constexpr bool has_quiet_NaN = L.specials != fmtcheck::Specials::none;
  static constexpr bool has_signaling_NaN = L.specials == fmtcheck::Specials::ieee;
  static constexpr std::float_denorm_style has_denorm = L.has_subnormals ? std::denorm_present : std::denorm_absent;
  static constexpr bool has_denorm_loss = false;
  static constexpr std::float_round_style round_style =
      P.rounding == fmtcheck::Rounding::rne || P.rounding == fmtcheck::Rounding::rna ? std::round_to_nearest
      : P.rounding == fmtcheck::Rounding::rtz                                         ? std::round_toward_zero
      : P.rounding == fmtcheck::Rounding::rup                                         ? std::round_toward_infinity
      : P.rounding == fmtcheck::Rounding::rdn                                         ? std::round_toward_neg_infinity
                                                                                      : std::round_indeterminate;
  // IEEE 754 behaviour: infinities, quiet and signaling NaNs, -0, subnormals.
  static constexpr bool is_iec559 = L.specials == fmtcheck::Specials::ieee && L.has_subnormals && L.is_signed;
  static constexpr bool is_bounded = true;
  static constexpr bool is_modulo = false;
  static constexpr int digits = L.mantissa_bits + 1;
  static constexpr int digits10 = L.mantissa_bits * 30103 / 100000;
  static constexpr int max_digits10 = (digits * 30103 + 99999) / 100000 + 1;
  static constexpr int radix = 2;
  static constexpr int min_exponent = L.min_exponent() + 1;
  static constexpr int min_exponent10 = -floor_log10(1 / pow2(L.min_exponent()));  // ceil(log10(min))
  static constexpr int max_exponent = L.max_exponent() + 1;
  static constexpr int max_exponent10 = floor_log10(max_value);
  static constexpr bool traps = false;
  static constexpr bool tinyness_before = P.tininess == fmtcheck::Tininess::before;

  static constexpr T min() noexcept { return code(L.has_subnormals ? std::uint64_t{1} << L.mantissa_bits : 0); }
  static constexpr T max() noexcept { return code(L.max_finite_code()); }
  static constexpr T lowest() noexcept { return L.is_signed ? code(L.sign_bit() | L.max_finite_code()) : min(); }
  static constexpr T epsilon() noexcept { return code(L.power_of_two_code(-L.mantissa_bits)); }
  static constexpr T round_error() noexcept { return code(L.power_of_two_code(-1)); }
  static constexpr T infinity() noexcept { return has_infinity ? code(L.infinity_code()) : T(); }
  static constexpr T quiet_NaN() noexcept { return code(fmtcheck::detail::quiet_nan_code(L)); }
  static constexpr T signaling_NaN() noexcept { return has_signaling_NaN ? code(L.infinity_code() | 1) : quiet_NaN(); }
  static constexpr T denorm_min() noexcept { return L.has_subnormals ? code(1) : min(); }
};
