// to_exact_decimal against decimal expansions produced here by long
// division on Boost rationals (digit by digit, a different algorithm from
// the library's multiply-by-5^k), over every code of the 8- and 16-bit
// presets and the extremes of tf32, fp32 and fp64.
#include <doctest/doctest.h>

#include <bit>
#include <boost/multiprecision/cpp_int.hpp>
#include <string>

#include "fmtcheck/core/decode.hpp"
#include "fmtcheck/core/format.hpp"

using namespace fmtcheck;
using boost::multiprecision::cpp_int;
using boost::multiprecision::cpp_rational;

namespace {

// |v| in plain decimal: integer part, then fraction digits until the
// remainder is zero (it always ends: the denominator is a power of two).
std::string long_division(const cpp_rational& v) {
  const cpp_rational a = v < 0 ? cpp_rational(-v) : v;
  const cpp_int whole = numerator(a) / denominator(a);
  std::string s = (v < 0 ? "-" : "") + whole.str();
  cpp_rational frac = a - cpp_rational(whole);
  if (frac == 0) return s;
  s += '.';
  while (frac != 0) {
    frac *= 10;
    const cpp_int digit = numerator(frac) / denominator(frac);
    s += static_cast<char>('0' + static_cast<int>(digit));
    frac -= cpp_rational(digit);
  }
  return s;
}

// The value of a finite code from the format's definition: (-1)^s *
// (2^M + mantissa or the subnormal mantissa) * 2^(exponent - bias - M).
cpp_rational value_of(const Format& f, std::uint64_t code) {
  const int m = f.mantissa_bits;
  const std::uint64_t field = (code >> m) & ((std::uint64_t{1} << f.exponent_bits) - 1);
  const std::uint64_t mantissa = code & ((std::uint64_t{1} << m) - 1);
  const bool negative = f.is_signed && ((code >> (f.exponent_bits + m)) & 1) != 0;
  cpp_int significand = mantissa;
  int exponent = static_cast<int>(field) - f.bias - m;
  if (field != 0 || !f.has_subnormals) significand += cpp_int(1) << m;
  if (field == 0 && f.has_subnormals) exponent = 1 - f.bias - m;
  cpp_rational v = exponent >= 0 ? cpp_rational(significand << exponent)
                                 : cpp_rational(significand, cpp_int(1) << -exponent);
  return negative ? cpp_rational(-v) : v;
}

void check_every_code(const Format& f) {
  INFO(f.name);
  std::uint64_t checked = 0;
  for (std::uint64_t code = 0; code < (std::uint64_t{1} << f.width()); ++code) {
    const std::uint64_t bits = f.to_storage(code);
    const ValueClass c = classify(f, bits);
    const bool negative = f.is_signed && (code >> (f.width() - 1)) != 0;
    std::string expected;
    if (c == ValueClass::nan) expected = negative ? "-nan" : "nan";
    else if (c == ValueClass::inf) expected = negative ? "-inf" : "inf";
    else if (c == ValueClass::zero) expected = negative ? "-0" : "0";
    else expected = long_division(value_of(f, code));
    if (to_exact_decimal(f, bits) != expected) {
      CHECK(to_exact_decimal(f, bits) == expected);  // reports the first few only
      if (++checked > 5) return;
    }
  }
  CHECK(checked == 0);
}

}  // namespace

TEST_CASE("to_exact_decimal: every code of every 8- and 16-bit preset") {
  for (const Format* f : {&formats::fp16, &formats::bf16, &formats::e4m3, &formats::e5m2, &formats::e4m3fnuz,
                          &formats::e5m2fnuz, &formats::e2m3, &formats::e3m2, &formats::e2m1, &formats::e8m0}) {
    check_every_code(*f);
  }
}

// Long expansions below were checked with Python's decimal module.
TEST_CASE("to_exact_decimal: published decimal expansions") {
  CHECK(to_exact_decimal(formats::fp16, 0x0001) == "0.000000059604644775390625");  // 2^-24
  CHECK(to_exact_decimal(formats::fp16, 0x7BFF) == "65504");
  CHECK(to_exact_decimal(formats::fp16, 0x3555) == "0.333251953125");
  CHECK(to_exact_decimal(formats::e4m3, 0x7E) == "448");
  CHECK(to_exact_decimal(formats::e4m3, 0xFE) == "-448");
  CHECK(to_exact_decimal(formats::e4m3, 0x80) == "-0");
  // fnuz NaN is the -0 pattern; its sign bit reads as "-", as ml_dtypes reads it.
  CHECK(to_exact_decimal(formats::e4m3fnuz, 0x80) == "-nan");
  CHECK(to_exact_decimal(formats::e8m0, 0x00) ==
        "0.000000000000000000000000000000000000005877471754111437539843682686111228389093327783860437607543758531"
        "3920862972736358642578125");  // 2^-127
  CHECK(to_exact_decimal(formats::e8m0, 0xFE) == "170141183460469231731687303715884105728");  // 2^127
  // float32's smallest subnormal 2^-149.
  CHECK(to_exact_decimal(formats::fp32, 0x00000001) ==
        "0.00000000000000000000000000000000000000000000140129846432481707092372958328991613128026194187651577175706"
        "828388979108268586060148663818836212158203125");
}

TEST_CASE("to_exact_decimal: tf32, fp32 and fp64 extremes against long division") {
  const std::pair<const Format*, std::uint64_t> cases[] = {
      {&formats::tf32, 0x00002000},  {&formats::tf32, 0x7F7FE000}, {&formats::tf32, 0x80802000},
      {&formats::tf32, 0x3EAAA000},  {&formats::fp32, 0x00000001}, {&formats::fp32, 0x007FFFFF},
      {&formats::fp32, 0x7F7FFFFF},  {&formats::fp32, 0x3DCCCCCD}, {&formats::fp64, 0x0000000000000001},
      {&formats::fp64, 0x000FFFFFFFFFFFFF}, {&formats::fp64, 0x7FEFFFFFFFFFFFFF}, {&formats::fp64, 0x3FB999999999999A},
      {&formats::fp64, 0xBFF0000000000001},
  };
  for (const auto& c : cases) {
    // Named copies, not structured bindings: INFO's lambda cannot capture those in clang before 16.
    const Format* f = c.first;
    const std::uint64_t bits = c.second;
    INFO(f->name << " " << bits);
    CHECK(to_exact_decimal(*f, bits) == long_division(value_of(*f, f->from_storage(bits))));
  }
}
