// parse_number and convert_text against exact values computed here with
// Boost.Multiprecision, including decimal strings that a detour through
// double would round twice.
#include <doctest/doctest.h>

#include <bit>
#include <boost/multiprecision/cpp_int.hpp>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "fmtcheck/core/convert.hpp"
#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/parse_number.hpp"

using namespace fmtcheck;
using boost::multiprecision::cpp_int;
using boost::multiprecision::cpp_rational;

namespace {

cpp_rational pow2(int k) {
  return k >= 0 ? cpp_rational(cpp_int(1) << k) : cpp_rational(cpp_int(1), cpp_int(1) << -k);
}
cpp_rational pow10(int k) {
  const cpp_int p = boost::multiprecision::pow(cpp_int(10), static_cast<unsigned>(k < 0 ? -k : k));
  return k >= 0 ? cpp_rational(p) : cpp_rational(cpp_int(1), p);
}

// The 64-bit significand, exponent and sticky bit of an exact v > 0, found
// by comparison with powers of two (not by the library's normalisation).
struct Expected {
  std::int32_t exponent;
  std::uint64_t significand;
  bool sticky;
};
Expected expected(const cpp_rational& v) {
  int e = 0;
  while (pow2(e) > v) --e;
  while (pow2(e + 1) <= v) ++e;
  const cpp_rational scaled = v / pow2(e - 63);
  const cpp_int whole = numerator(scaled) / denominator(scaled);
  return {e, static_cast<std::uint64_t>(whole), cpp_rational(whole) != scaled};
}

void check_exact(const char* text, bool negative, const cpp_rational& v) {
  INFO(text);
  const auto x = parse_number(text);
  REQUIRE(x.has_value());
  const Expected e = expected(v);
  CHECK(x->kind == Unpacked::Kind::finite);
  CHECK(x->sign == negative);
  CHECK(x->exponent == e.exponent);
  CHECK(x->significand == e.significand);
  CHECK(x->sticky == e.sticky);
}

std::uint64_t via_double(const char* text, const Format& f) {
  return convert(std::strtod(text, nullptr), f).bits;
}

}  // namespace

TEST_CASE("decimal text is exact: significand, exponent and sticky match Boost") {
  check_exact("1", false, 1);
  check_exact("0.1", false, cpp_rational(1, 10));
  check_exact("-0.1", true, cpp_rational(1, 10));
  check_exact("448", false, 448);
  check_exact("3.14159265358979323846264338327950288", false,
              cpp_rational(cpp_int("314159265358979323846264338327950288")) * pow10(-35));
  check_exact("1.000000059604644775390625", false, 1 + pow2(-24));  // exactly representable in 64 bits
  check_exact("18446744073709551617", false, cpp_rational(cpp_int("18446744073709551617")));  // 2^64 + 1: sticky
  check_exact("6.02214076e23", false, cpp_rational(cpp_int("602214076")) * pow10(15));
  check_exact("1e-400", false, pow10(-400));
  check_exact("00012.50000", false, cpp_rational(25, 2));
  check_exact(".5", false, cpp_rational(1, 2));
  check_exact("5.", false, 5);
  check_exact("+2.5E-3", false, cpp_rational(25, 10000));
}

TEST_CASE("hex floats are exact") {
  check_exact("0x1.8p-3", false, cpp_rational(3, 16));
  check_exact("0X1P+4", false, 16);
  check_exact("-0x.8p1", true, 1);
  check_exact("0xA.Bp0", false, cpp_rational(171, 16));
  check_exact("0x1.fffffffffffffffffp0", false, 2 - pow2(-68));  // 69 bits: sticky
  check_exact("0x1p-1074", false, pow2(-1074));
}

TEST_CASE("decimals that double would round twice are rounded once") {
  // Each text lies a hair from a tie of the target format, closer to the tie
  // than half a double ulp, so strtod lands exactly on the tie and the tie
  // rule then picks the wrong neighbour. The exact value is stated next to
  // each case; the text is its decimal expansion.
  struct Case {
    const char* text;
    const Format* format;
    std::uint64_t correct;      // neighbour on the side of the exact value
    std::uint64_t via_double;   // what rounding strtod's result gives
  };
  const Case cases[] = {
      // 1 + 2^-11 + 10^-17: above the fp16 tie between 1 and 1 + 2^-10.
      {"1.00048828125000001", &formats::fp16, 0x3C01, 0x3C00},
      // 1 + 3 * 2^-11 - 10^-17: below the tie between 0x3C01 and 0x3C02.
      {"1.00146484374999999", &formats::fp16, 0x3C01, 0x3C02},
      // 1 + 2^-8 + 10^-17: above the bf16 tie between 1 and 1 + 2^-7.
      {"1.00390625000000001", &formats::bf16, 0x3F81, 0x3F80},
      // 1.0625 + 10^-17: above the E4M3 tie between 1 and 1.125.
      {"1.06250000000000001", &formats::e4m3, 0x39, 0x38},
      // 2^-25 + 10^-30: above half of fp16's smallest subnormal.
      {"2.980232238769531250000001e-8", &formats::fp16, 0x0001, 0x0000},
      // 1 + 2^-24 + 10^-30: above the float32 tie between 1 and 1 + 2^-23.
      {"1.000000059604644775390625000001", &formats::fp32, 0x3F800001, 0x3F800000},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    CHECK(convert_text(c.text, *c.format).bits == c.correct);
    CHECK(via_double(c.text, *c.format) == c.via_double);  // the trap is real
  }
  // The exact values behind the first cases, as Boost sees them.
  check_exact("1.00048828125000001", false, 1 + pow2(-11) + pow10(-17));
  check_exact("2.980232238769531250000001e-8", false, pow2(-25) + pow10(-32));
}

TEST_CASE("huge and tiny exponents") {
  Policy rne;
  CHECK(convert_text("1e400", formats::fp64).bits == 0x7FF0000000000000u);
  CHECK(convert_text("-1e99999999999", formats::fp64).bits == 0xFFF0000000000000u);
  CHECK(convert_text("1e400", formats::fp16, Policy{.overflow = Overflow::sat}).bits == 0x7BFF);
  CHECK(convert_text("1e-400", formats::fp64).bits == 0);
  CHECK(convert_text("-1e-99999999999", formats::fp64).bits == 0x8000000000000000u);
  const Conversion tiny = convert_text("1e-5000", formats::fp64, rne);
  CHECK(tiny.bits == 0);
  CHECK(tiny.flags.has(Flag::underflow));
  CHECK(tiny.flags.has(Flag::tiny_to_zero));
  CHECK(convert_text("1e-5000", formats::fp64, Policy{.rounding = Rounding::rup}).bits == 1);
  CHECK(convert_text("0e999999", formats::fp16).bits == 0);
  // fp64's smallest subnormal 2^-1074 and the two sides of half of it
  // (2^-1075 = 2.4703282292062327208828...e-324).
  CHECK(convert_text("4.9406564584124654e-324", formats::fp64).bits == 1);
  CHECK(convert_text("2.4703282292062327e-324", formats::fp64).bits == 0);
  CHECK(convert_text("2.4703282292062328e-324", formats::fp64).bits == 1);
  CHECK(convert_text("1.7976931348623157e308", formats::fp64).bits == 0x7FEFFFFFFFFFFFFFu);
  // Half an ulp above fp64's max rounds to infinity: 2^1024 - 2^970.
  const cpp_rational halfway = pow2(1024) - pow2(970);
  const std::string halfway_text = numerator(halfway).str();
  CHECK(convert_text(halfway_text, formats::fp64).bits == 0x7FF0000000000000u);
  const std::string below_text = cpp_int(numerator(halfway) - 1).str();
  CHECK(convert_text(below_text, formats::fp64).bits == 0x7FEFFFFFFFFFFFFFu);
}

TEST_CASE("infinities and NaN by name") {
  CHECK(parse_number("inf")->kind == Unpacked::Kind::inf);
  CHECK(parse_number("-Infinity")->sign);
  CHECK(parse_number("-Infinity")->kind == Unpacked::Kind::inf);
  CHECK(parse_number("NAN")->kind == Unpacked::Kind::nan);
  CHECK(parse_number("-0")->kind == Unpacked::Kind::zero);
  CHECK(parse_number("-0")->sign);
  CHECK(convert_text("nan", formats::fp16).bits == 0x7E00);
}

TEST_CASE("malformed text is rejected with a reason") {
  for (const char* text : {"", "+", "-", ".", "e5", "1e", "1e+", "1..2", "1.2.3", " 1", "1 ", "1,5", "--1", "abc",
                           "1e5.0", "0x", "0x1.8", "0xp1", "0x1p", "0xg1p0", "1p5", "nan(1)", "infinit", "0b101"}) {
    INFO(text);
    std::string error;
    CHECK_FALSE(parse_number(text, &error).has_value());
    CHECK(error.find("malformed number") != std::string::npos);
    CHECK_THROWS_AS(convert_text(text, formats::fp16), std::invalid_argument);
  }
}

TEST_CASE("fractions are exact quotients, rounded once") {
  check_exact("1/3", false, cpp_rational(1, 3));
  check_exact("-2/3", true, cpp_rational(2, 3));
  check_exact("2/-3", true, cpp_rational(2, 3));
  check_exact("-1/-7", false, cpp_rational(1, 7));
  check_exact("0.1/3", false, cpp_rational(1, 30));
  check_exact("0x1p-3/3", false, cpp_rational(1, 24));
  check_exact("22/7e-5", false, cpp_rational(2200000, 7));
  check_exact("1/4", false, cpp_rational(1, 4));
  CHECK(parse_number("0/5")->kind == Unpacked::Kind::zero);
  CHECK(parse_number("0/-5")->sign);
  // 1/3 in fp16 is 1.0101...b * 2^-2: the ten kept bits 0101010101 and a
  // discarded 0101... below half, so 0x3555; float32's 23 kept bits end in
  // 0 with 1010... discarded, above half: 0x3eaaaaab (Python: struct.pack('<f', 1/3)).
  CHECK(convert_text("1/3", formats::fp16).bits == 0x3555);
  CHECK(convert_text("1/3", formats::fp32).bits == 0x3EAAAAABu);
  // 2/3 into e4m3: 1.0101...b * 2^-1, three kept bits 010 and 1010... above
  // half: 1.011b * 2^-1 = 0.6875, code (6 << 3) | 3 = 0x33.
  CHECK(convert_text("2/3", formats::e4m3).bits == 0x33);
  // Quotients beyond 1e400 are huge like any such number: infinity in fp64.
  CHECK(convert_text("1e300/1e-300", formats::fp64).bits == 0x7FF0000000000000u);
  CHECK(convert_text("1e-300/1e300", formats::fp64).bits == 0);
}

TEST_CASE("malformed fractions are rejected with a reason") {
  const std::pair<const char*, const char*> cases[] = {
      {"1/0", "division by zero"},         {"1/-0.0", "division by zero"},
      {"1/2/3", "more than one '/'"},      {"/3", "no digits"},
      {"3/", "no digits"},                 {"inf/2", "finite numbers"},
      {"1/nan", "finite numbers"},         {"1e500/1e499", "finite numbers"},
      {"1/x", "malformed number 'x'"},     {"1 / 3", "malformed number '1 '"},
  };
  for (const auto& c : cases) {
    const char* text = c.first;  // not a structured binding: clang 14's INFO cannot capture one
    const char* why = c.second;
    INFO(text);
    std::string error;
    CHECK_FALSE(parse_number(text, &error).has_value());
    CHECK(error.find(why) != std::string::npos);
    CHECK_THROWS_AS(convert_text(text, formats::fp16), std::invalid_argument);
  }
}
