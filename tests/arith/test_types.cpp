// The value types: numeric_limits against the library's format facts and the
// published numbers, operators on hand-checked cases, hashing and streams.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <unordered_set>

#include "fmtcheck/core/facts.hpp"
#include "fmtcheck/fmtcheck.hpp"
#include "reference_ops.hpp"

using namespace fmtcheck;

namespace {

template <class T>
void check_limits(const Format& preset, double max, double min_positive) {
  using L = std::numeric_limits<T>;
  CAPTURE(preset.name);
  CHECK(T::format() == preset);
  const FormatFacts f = facts(preset);
  static_assert(L::is_specialized && !L::is_integer && !L::is_exact && L::radix == 2);
  CHECK(L::digits == preset.precision());
  CHECK(L::digits10 == f.digits10);
  CHECK(L::max_digits10 == f.max_digits10);
  CHECK(static_cast<double>(L::max()) == f.max_finite);
  CHECK(static_cast<double>(L::max()) == max);
  CHECK(static_cast<double>(L::min()) == f.min_normal);
  CHECK(static_cast<double>(L::denorm_min()) == min_positive);
  CHECK(static_cast<double>(L::denorm_min()) == f.min_subnormal.value_or(f.min_normal));
  CHECK(static_cast<double>(L::epsilon()) == f.epsilon);
  CHECK(static_cast<double>(L::round_error()) == 0.5);
  CHECK(static_cast<double>(L::lowest()) == (preset.is_signed ? -max : f.min_normal));
  CHECK(L::has_infinity == f.pos_inf_bits.has_value());
  if (L::has_infinity) CHECK(L::infinity().bits() == *f.pos_inf_bits);
  CHECK(L::has_quiet_NaN == (f.nan_codes > 0));
  if (L::has_quiet_NaN) CHECK(std::isnan(static_cast<double>(L::quiet_NaN())));
  if (L::has_signaling_NaN) CHECK(std::isnan(static_cast<double>(L::signaling_NaN())));
  CHECK(L::is_signed == preset.is_signed);
  CHECK(L::has_denorm == (preset.has_subnormals ? std::denorm_present : std::denorm_absent));
  // C's convention: min normal = 2^(min_exponent - 1), max < 2^max_exponent.
  CHECK(std::ldexp(1.0, L::min_exponent - 1) == f.min_normal);
  CHECK(f.max_finite < std::ldexp(1.0, L::max_exponent));
  CHECK(f.max_finite >= std::ldexp(1.0, L::max_exponent - 1));
  CHECK(L::min_exponent10 == static_cast<int>(std::ceil(std::log10(f.min_normal))));
  CHECK(L::max_exponent10 == static_cast<int>(std::floor(std::log10(f.max_finite))));
}

}  // namespace

TEST_CASE("numeric_limits of every value type agree with the format facts and DESIGN.md") {
  check_limits<float16>(formats::fp16, 65504, 0x1p-24);
  check_limits<bfloat16>(formats::bf16, 0x1.fep127, 0x1p-133);
  check_limits<tf32>(formats::tf32, 0x1.ffcp127, 0x1p-136);
  check_limits<float8_e4m3>(formats::e4m3, 448, 0x1p-9);
  check_limits<float8_e5m2>(formats::e5m2, 57344, 0x1p-16);
  check_limits<float8_e4m3fnuz>(formats::e4m3fnuz, 240, 0x1p-10);
  check_limits<float8_e5m2fnuz>(formats::e5m2fnuz, 57344, 0x1p-17);
  check_limits<float6_e2m3>(formats::e2m3, 7.5, 0.125);
  check_limits<float6_e3m2>(formats::e3m2, 28, 0.0625);
  check_limits<float4_e2m1>(formats::e2m1, 6, 0.5);
  check_limits<float8_e8m0>(formats::e8m0, 0x1p127, 0x1p-127);
  // The same numbers C++ gives float.
  check_limits<float32>(formats::fp32, std::numeric_limits<float>::max(), std::numeric_limits<float>::denorm_min());
  CHECK(std::numeric_limits<float32>::min_exponent10 == std::numeric_limits<float>::min_exponent10);
  CHECK(std::numeric_limits<float32>::max_exponent10 == std::numeric_limits<float>::max_exponent10);
  CHECK(std::numeric_limits<float32>::digits10 == std::numeric_limits<float>::digits10);
  CHECK(std::numeric_limits<float32>::max_digits10 == std::numeric_limits<float>::max_digits10);
  static_assert(std::numeric_limits<float16>::max().bits() == 0x7BFF);  // constexpr
  static_assert(std::numeric_limits<float8_e4m3>::quiet_NaN().bits() == 0x7F);
  static_assert(std::numeric_limits<float8_e4m3fnuz>::quiet_NaN().bits() == 0x80);
  static_assert(std::numeric_limits<tf32>::max().bits() == 0x7F7FE000u);
}

TEST_CASE("IEEE P3109 value types: the family's layout, limits and infinities") {
  // Max and smallest positive values as gfloat's format_info_p3109 gives them.
  check_limits<binary8<3>>(*p3109_format(3, true, true), 49152, 0x1p-17);
  check_limits<binary8<1>>(*p3109_format(1, true, true), 0x1p62, 0x1p-63);
  check_limits<binary8<7, true, false>>(*p3109_format(7, true, false), 1.984375, 0x1p-6);
  check_limits<binary8<5, false, true>>(*p3109_format(5, false, true), 232, 0x1p-11);
  check_limits<binary8<8, false, false>>(*p3109_format(8, false, false), 1.984375, 0x1p-7);
  // The signed finite p4 is E4M3FNUZ's encoding, and takes that preset's name.
  CHECK(binary8<4, true, false>::format() == formats::e4m3fnuz);
  using p3 = binary8<3>;
  static_assert(std::numeric_limits<p3>::infinity().bits() == 0x7F);
  static_assert(std::numeric_limits<p3>::quiet_NaN().bits() == 0x80);
  CHECK((std::numeric_limits<p3>::max() + std::numeric_limits<p3>::max()).bits() == 0x7F);  // OvfInf
  CHECK((-std::numeric_limits<p3>::infinity()).bits() == 0xFF);
  CHECK((-p3(0.0)).bits() == 0x00);  // no negative zero
  CHECK(std::isnan(static_cast<double>(std::numeric_limits<p3>::infinity() - std::numeric_limits<p3>::infinity())));
}

TEST_CASE("a user format from a layout") {
  using e6m9 = basic_float<Layout{6, 9, 31}>;
  CHECK(e6m9::format().name == "e6m9");
  CHECK(e6m9::format() == format_from_string("e6m9"));
  CHECK(static_cast<double>(std::numeric_limits<e6m9>::max()) == 0x1.ff8p31);
  CHECK(static_cast<double>(e6m9(1.0) + e6m9(0x1p-10)) == 1.0);  // tie to even
}

TEST_CASE("operators round once per operation") {
  // Ties to even, by hand: 1 + 2^-11 is halfway between 1 and 1 + 2^-10.
  CHECK(static_cast<double>(float16(1.0) + float16(0x1p-11)) == 1.0);
  CHECK(static_cast<double>(float16(1.0) + float16(0x1.8p-11)) == 1.0 + 0x1p-10);
  CHECK(static_cast<double>(bfloat16(3.0f) * bfloat16(1.0f / 3)) == 1.0);  // 3 * 0x3EAB = 1.0000305 -> 1
  CHECK(static_cast<double>(float16(1.0) / float16(3.0)) == 0x1.554p-2);
  CHECK(static_cast<double>(sqrt(float16(2.0))) == 0x1.6ap0);
  // Fused: (1 + 2^-9)^2 - 1 = 2^-8 + 2^-18 exactly; a rounded product would lose 2^-18.
  CHECK(static_cast<double>(fma(float16(0x1.008p0), float16(0x1.008p0), float16(-1.0))) == 0x1.004p-8);
  CHECK(static_cast<double>(float16(0x1.008p0) * float16(0x1.008p0) - float16(-1.0) - float16(2.0)) == 0x1p-8);
  // Overflow: fp16 gives inf; the fp8 types saturate as CUDA's do.
  CHECK(std::isinf(static_cast<double>(float16(60000.0) + float16(60000.0))));
  CHECK(float8_e4m3(1000.0f).bits() == 0x7E);
  CHECK(float8_e4m3(-1e30).bits() == 0xFE);
  CHECK((float8_e4m3(448.0f) * float8_e4m3(2.0f)).bits() == 0x7E);
  CHECK(float8_e5m2(1e6).bits() == 0x7B);
  CHECK(float8_e5m2(std::numeric_limits<double>::infinity()).bits() == 0x7B);
  // Integers convert exactly, then round once: 2049 is a tie in fp16.
  CHECK(static_cast<double>(float16(2049)) == 2048);
  CHECK(static_cast<double>(bfloat16(std::numeric_limits<std::int64_t>::max())) == 0x1p63);
  CHECK(static_cast<double>(float16(-7)) == -7);
  // Negation is exact; fnuz has no -0.
  CHECK((-float16(0.0)).bits() == 0x8000);
  CHECK((-float8_e4m3fnuz(0.0f)).bits() == 0x00);
  CHECK((-float8_e4m3fnuz(1.0f)).bits() == 0xC0);
  CHECK(std::isnan(static_cast<double>(-float8_e8m0(1.0f))));
}

TEST_CASE("comparisons follow IEEE: -0 == +0, NaN is unordered") {
  const float16 nan = std::numeric_limits<float16>::quiet_NaN();
  CHECK(float16(0.0) == -float16(0.0));
  CHECK_FALSE(nan == nan);
  CHECK(nan != nan);
  CHECK_FALSE(nan < float16(1.0));
  CHECK_FALSE(nan >= float16(1.0));
  CHECK(-std::numeric_limits<float16>::infinity() < std::numeric_limits<float16>::lowest());
  CHECK(float16(-1.0) < float16(-0.5));
  CHECK(float16(0x1p-24) > float16(0.0));
  CHECK(isnan(nan));
  CHECK(isinf(std::numeric_limits<float16>::infinity()));
  CHECK((min(float16(-0.0), float16(0.0))).bits() == 0x8000);
  CHECK(isnan(max(nan, float16(1.0))));
}

TEST_CASE("hash agrees with ==, streams round-trip") {
  CHECK(std::hash<float16>{}(float16(0.0)) == std::hash<float16>{}(-float16(0.0)));
  std::unordered_set<bfloat16> set{bfloat16(1.0f), bfloat16(2.0f), bfloat16(1.0f), bfloat16(0.0f), -bfloat16(0.0f)};
  CHECK(set.size() == 3);

  std::stringstream ss;
  ss << bfloat16(1.5f) << ' ' << float8_e4m3(-448.0f);
  CHECK(ss.str() == "1.5 -448");
  bfloat16 x;
  float16 y;
  std::istringstream("0.1 0x1.8p-24") >> x >> y;
  CHECK(x.bits() == 0x3DCD);  // 0.1 rounded once: 0x3DCCCCCD as float rounds to 0x3DCD
  CHECK(y.bits() == 0x0002);  // 1.5 * 2^-24: a tie, to even
  std::istringstream bad("nonsense");
  bad >> x;
  CHECK(bad.fail());
}

// Whether a and b can be combined by each operator (a requires-expression
// in a template: a false answer is a substitution failure, not an error).
template <class A, class B>
constexpr bool combines = requires(A a, B b) { a + b; } || requires(A a, B b) { a - b; } ||
                          requires(A a, B b) { a * b; } || requires(A a, B b) { a / b; } ||
                          requires(A a, B b) { a == b; } || requires(A a, B b) { a < b; } ||
                          requires(A a, B b) { a += b; };

TEST_CASE("mixed formats do not combine; explicit conversion rounds once, as the reference") {
  static_assert(combines<float16, float16> && combines<float8_e4m3, float8_e4m3>);
  static_assert(!combines<bfloat16, float16> && !combines<float16, bfloat16>);
  static_assert(!combines<float8_e4m3, float8_e5m2> && !combines<tf32, float32>);
  static_assert(!combines<float16, float> && !combines<double, bfloat16> && !combines<float16, int>);
  static_assert(!std::is_convertible_v<bfloat16, float16> && std::is_constructible_v<float16, bfloat16>);

  // Every bf16 code into fp16 (rne, nosat) and into e4m3 (rne, sat: its
  // type's policy), against the exact reference's conversion.
  reference::Table bf16(formats::bf16), fp16(formats::fp16), e4m3(formats::e4m3);
  fp16.set_policy(float16::policy);
  e4m3.set_policy(float8_e4m3::policy);
  std::uint64_t checked = 0;
  for (std::uint32_t code = 0; code < 65536; ++code) {
    const auto x = bfloat16::from_bits(static_cast<std::uint16_t>(code));
    const auto h = float16(x);
    const auto q = float8_e4m3(x);
    if (x.is_nan()) {
      CHECK(h.is_nan());
      CHECK(q.is_nan());
      continue;
    }
    if (h.bits() != reference::Arithmetic(fp16).convert(bf16, code).bits) FAIL_CHECK("fp16 from bf16 ", code);
    if (q.bits() != reference::Arithmetic(e4m3).convert(bf16, code).bits) FAIL_CHECK("e4m3 from bf16 ", code);
    ++checked;
  }
  CHECK(checked == 65536 - 254);  // every code but the NaNs
  // Back from fp16: every fp16 value is a double, and bf16 of it rounds once.
  CHECK(bfloat16(float16(65504.0)).bits() == 0x4780);  // 65504 = 0x1.ffcp15 rounds up to 2^16
  CHECK(float32(float16(-0.0)).bits() == 0x80000000);
}
