// Rounder: round_to_format with the format's limits derived once. Its
// answers are checked against hand-derived codes, its per-value random bits
// against the policy's, and its lifetime rule (it keeps pointers) at compile
// time.
#include <doctest/doctest.h>

#include <type_traits>

#include "fmtcheck/round_to_format.hpp"

using namespace fmtcheck;

static_assert(!std::is_constructible_v<Rounder, Format&&, const Policy&>, "a temporary format would dangle");
static_assert(!std::is_constructible_v<Rounder, const Format&, Policy&&>, "a temporary policy would dangle");

TEST_CASE("Rounder gives the codes of hand-derived e4m3 and fp16 conversions") {
  const Policy rne;
  const Rounder e4m3(formats::e4m3, rne);
  // 0.1 lies between 0.1015625 = 13/128 (0x1d) and 0.09375 (0x1c), nearer the first.
  CHECK(e4m3(unpack(0.1f)).bits == 0x1d);
  CHECK(e4m3(unpack(0.1f)).flags == Flags(Flag::inexact));
  // 464 is halfway between 448 (max finite, 0x7e, even) and 480 (beyond
  // it): the tie goes to 448; 470 rounds toward 480, which overflows to NaN.
  CHECK(e4m3(unpack(464.0f)).bits == 0x7e);
  CHECK(e4m3(unpack(470.0f)).bits == 0x7f);
  // 2^-10 is a quarter of the smallest subnormal 2^-9 and rounds to +0.
  CHECK(e4m3(unpack(0x1p-10f)).bits == 0x00);
  CHECK(e4m3(unpack(-0x1p-10f)).bits == 0x80);
  const Policy rup{.rounding = Rounding::rup};
  const Rounder fp16_up(formats::fp16, rup);
  CHECK(fp16_up(unpack(1.0f + 0x1p-20f)).bits == 0x3c01);  // 1 + 2^-10
  CHECK(fp16_up(unpack(-(1.0f + 0x1p-20f))).bits == 0xbc00);
}

TEST_CASE("Rounder under stochastic rounding takes the random bits given per value") {
  const Policy sr{.rounding = Rounding::sr, .random_bit_count = 32};
  const Rounder round(formats::e4m3, sr);
  // 1 + 2^-4 is halfway between 1.0 (0x38) and 1.125 (0x39): the discarded
  // fraction's top 32 bits are 2^31, so it rounds up iff the draw is >= 2^31.
  const Unpacked x = unpack(1.0f + 0x1p-4f);
  CHECK(round(x, 0x7FFFFFFFu).bits == 0x38);
  CHECK(round(x, 0x80000000u).bits == 0x39);
  // Without a draw it takes the policy's own bits, as round_to_format does.
  const Policy sr_up{.rounding = Rounding::sr, .random_bits = 0x80000000u, .random_bit_count = 32};
  CHECK(Rounder(formats::e4m3, sr_up)(x).bits == 0x39);
  CHECK(round_to_format(x, formats::e4m3, sr_up).bits == 0x39);
}
