// Rounder: round_to_format with the format's limits derived once. Its
// answers are checked against hand-derived codes, its per-value random bits
// against the policy's, and that it holds its format and policy by value,
// trivially copyable (a GPU kernel takes one as its argument).
#include <doctest/doctest.h>

#include <bit>
#include <cstdint>
#include <random>
#include <type_traits>

#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/policy.hpp"
#include "fmtcheck/core/round_to_format.hpp"

using namespace fmtcheck;

static_assert(std::is_trivially_copyable_v<Rounder>, "a GPU kernel takes a Rounder by value");

TEST_CASE("a Rounder made from temporaries keeps its own copies") {
  const Rounder r = [] {
    Policy p;
    p.overflow = Overflow::sat;
    return Rounder(format_from_string("e4m3"), p);
  }();
  CHECK(r(unpack(1000.0f)).bits == 0x7e);  // sat: +max
  CHECK(r.format() == formats::e4m3);
  CHECK(r.policy().overflow == Overflow::sat);
}

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

// A Rounder shares one result per sign for every value far below the
// smallest subnormal (deterministic modes) and for every overflow;
// round_to_format derives each value's own. Both must give these
// hand-derived results.
TEST_CASE("values far below the subnormals and beyond the range: a Rounder's shared results, and per value") {
  const auto both = [](const Format& f, const Policy& p, float x) {
    const Conversion shared = Rounder(f, p)(unpack(x));
    CHECK(shared == round_to_format(unpack(x), f, p));
    return shared;
  };
  const Flags lost_to_zero = Flags(Flag::inexact) | Flag::underflow | Flag::tiny_to_zero;
  // e4m3's smallest subnormal is 2^-9; 2^-12 and 2^-100 are far below half of it.
  for (const float tiny : {0x1p-12f, 0x1.fffffep-11f, 0x1p-100f}) {
    CAPTURE(tiny);
    CHECK(both(formats::e4m3, Policy{}, tiny) == Conversion{0x00, lost_to_zero});
    CHECK(both(formats::e4m3, Policy{}, -tiny) == Conversion{0x80, lost_to_zero});
    // Upward: +tiny becomes the smallest subnormal, -tiny rounds to -0.
    const Policy up{.rounding = Rounding::rup};
    CHECK(both(formats::e4m3, up, tiny) == Conversion{0x01, Flags(Flag::inexact) | Flag::underflow | Flag::subnormal});
    CHECK(both(formats::e4m3, up, -tiny) == Conversion{0x80, lost_to_zero});
    // ftz flushes the subnormal that rounding upward gave.
    const Policy up_ftz{.rounding = Rounding::rup, .subnormals = Subnormals::ftz};
    CHECK(both(formats::e4m3, up_ftz, tiny) == Conversion{0x00, lost_to_zero | Flag::flushed});
  }
  // e4m3fnuz (smallest subnormal 2^-10) has no -0: a negative value that
  // rounds to zero gives +0.
  CHECK(both(formats::e4m3fnuz, Policy{}, -0x1p-12f) == Conversion{0x00, lost_to_zero});
  // Just below half the smallest subnormal is "far below"; 2^-10 itself is
  // the tie, which rounds to even (0), and just above it rounds up.
  CHECK(both(formats::e4m3, Policy{}, 0x1p-10f) == Conversion{0x00, lost_to_zero});
  CHECK(both(formats::e4m3, Policy{}, 0x1.000002p-10f).bits == 0x01);
  // Overflow: e4m3 has no infinity (NaN 0x7f), sat gives 448 (0x7e), and
  // fp16 toward zero gives its max finite 65504 (0x7bff).
  const Flags overflowed = Flags(Flag::overflow) | Flag::inexact;
  CHECK(both(formats::e4m3, Policy{}, 1e6f) == Conversion{0x7f, overflowed | Flag::nan_produced});
  CHECK(both(formats::e4m3, Policy{}, -1e6f) == Conversion{0xff, overflowed | Flag::nan_produced});
  CHECK(both(formats::e4m3, Policy{.overflow = Overflow::sat}, -1e6f) == Conversion{0xfe, overflowed | Flag::saturated});
  CHECK(both(formats::fp16, Policy{.rounding = Rounding::rtz}, 1e6f) == Conversion{0x7bff, overflowed | Flag::saturated});
  CHECK(both(formats::fp16, Policy{.rounding = Rounding::rup}, -1e6f) ==
        Conversion{0xfbff, overflowed | Flag::saturated});
  CHECK(both(formats::fp16, Policy{.rounding = Rounding::rup}, 1e6f) == Conversion{0x7c00, overflowed});
}

// Every mode and each other policy axis away from the default, for the
// checks of the results a Rounder shares.
const Policy kPolicies[] = {
    Policy{},
    Policy{.rounding = Rounding::rna},
    Policy{.rounding = Rounding::rtz},
    Policy{.rounding = Rounding::rup},
    Policy{.rounding = Rounding::rdn},
    Policy{.rounding = Rounding::rto},
    // The largest draws: the likeliest to round a tiny value up.
    Policy{.rounding = Rounding::sr, .random_bits = 0xFFFFFFFFu, .random_bit_count = 32},
    Policy{.rounding = Rounding::sr, .random_bits = 0xFFu, .random_bit_count = 8},
    Policy{.rounding = Rounding::sr, .random_bits = 1, .random_bit_count = 1},
    // sr-rne rounds the fraction up first: a value one binade lower than
    // under sr can still round away.
    Policy{.rounding = Rounding::sr_rne, .random_bits = 0xFFFFFFFFu, .random_bit_count = 32},
    Policy{.rounding = Rounding::sr_rne, .random_bits = 1, .random_bit_count = 1},
    // sr-rna rounds a half fraction up, sr-rno an even one at half.
    Policy{.rounding = Rounding::sr_rna, .random_bits = 0xFFFFFFFFu, .random_bit_count = 32},
    Policy{.rounding = Rounding::sr_rna, .random_bits = 1, .random_bit_count = 1},
    Policy{.rounding = Rounding::sr_rno, .random_bits = 0xFFFFFFFFu, .random_bit_count = 32},
    Policy{.rounding = Rounding::sr_rno, .random_bits = 1, .random_bit_count = 1},
    Policy{.overflow = Overflow::sat},
    Policy{.overflow = Overflow::satprop},
    Policy{.subnormals = Subnormals::ftz},
    Policy{.subnormals = Subnormals::daz},
    Policy{.tininess = Tininess::before},
    Policy{.nan = NanConvention::cuda},
};

// shared_result names the result operator() gives a whole binade without
// rounding, which the exhaustive proof of the batch kernel and the batch
// fallback take for every value of such a binade. Checked in every float32
// binade (each sign and exponent field of the normal numbers) at both ends
// of the mantissa and between, for every preset under every mode and the
// other policy axes, against operator() and against round_to_format, which
// rounds each value alone.
TEST_CASE("shared_result is operator()'s result for every value of its binade") {
  const std::uint32_t mantissas[] = {0, 1, 0x2AAAAA, 0x3FFFFF, 0x400000, 0x555555, 0x7FFFFE, 0x7FFFFF};
  int shared_binades = 0;
  for (const Format& f : preset_formats()) {
    for (const Policy& p : kPolicies) {
      const Rounder round(f, p);
      for (std::uint32_t top = 0; top < 512; ++top) {  // sign and exponent field
        const std::uint32_t field = top & 0xFF;
        if (field == 0 || field == 0xFF) continue;  // zeros, subnormals, infinities, NaNs: no common binade
        const Conversion* shared = round.shared_result(unpack(std::bit_cast<float>(top << 23)));
        if (shared == nullptr) continue;
        ++shared_binades;
        for (const std::uint32_t m : mantissas) {
          const float x = std::bit_cast<float>(top << 23 | m);
          CAPTURE(f.name);
          CAPTURE(describe(p));
          CAPTURE(x);
          CHECK(round(unpack(x)) == *shared);
          CHECK(round_to_format(unpack(x), f, p) == *shared);  // each value rounded alone, nothing shared
        }
      }
    }
  }
  // The 8-bit formats share most binades: the check has something to check.
  CHECK(shared_binades > 1000);
}

TEST_CASE("shared_result: none where values round one by one") {
  const Policy rne;
  const Rounder e4m3(formats::e4m3, rne);
  CHECK(e4m3.shared_result(unpack(1.0f)) == nullptr);       // inside the binades
  CHECK(e4m3.shared_result(unpack(0x1p-8f)) == nullptr);    // a subnormal result
  CHECK(e4m3.shared_result(unpack(0.0f)) == nullptr);       // zero is a special case
  CHECK(e4m3.shared_result(unpack(0x1p-20f)) != nullptr);   // far below
  CHECK(e4m3.shared_result(unpack(0x1p20f)) != nullptr);    // beyond the range
  // Stochastic rounding with 32 bits: e4m3's smallest subnormal is 2^-9, a
  // draw can round up anything from 2^-41 (its top 32 discarded bits are
  // not all zero), nothing below.
  const Policy stochastic{.rounding = Rounding::sr, .random_bit_count = 32};
  const Rounder sr(formats::e4m3, stochastic);
  CHECK(sr.shared_result(unpack(0x1p-20f)) == nullptr);
  CHECK(sr.shared_result(unpack(0x1p-41f)) == nullptr);
  CHECK(sr.shared_result(unpack(0x1p-42f)) != nullptr);
  CHECK(sr.shared_result(unpack(0x1p20f)) != nullptr);
  CHECK(sr(unpack(0x1.fffffep-42f), 0xFFFFFFFFu).bits == 0x00);
  CHECK(sr(unpack(0x1p-41f), 0xFFFFFFFFu).bits == 0x01);
  // An unsigned format takes no negative value: every one gives NaN and
  // invalid (round_special), shared; zero is a special case of its own.
  const Rounder e8m0(formats::e8m0, rne);
  REQUIRE(e8m0.shared_result(unpack(-0x1p100f)) != nullptr);
  CHECK(*e8m0.shared_result(unpack(-0x1p100f)) == round_to_format(unpack(-0x1.8p-3f), formats::e8m0, rne));
  CHECK(e8m0.shared_result(unpack(-0x1p100f))->flags == (Flags(Flag::invalid) | Flag::nan_produced));
  CHECK(e8m0.shared_result(unpack(-0.0f)) == nullptr);
}

// shares_low_bits says which runs of values round alike inside the binades;
// the exhaustive proof and the batch fallback then round only a run's
// first value. Checked for every preset under kPolicies, in every binade
// of the format and one beyond each end, for runs freeing the low 6 or 9
// bits of a float32 mantissa (the fallback's and the proof's runs) and
// wider ones: wherever it says yes, the run's extreme members (free bits
// and sticky all clear, all set) and random ones round to the first
// value's result, by operator() and by round_to_format alone. The
// discarded bits above the free ones are set to the patterns where the
// answer changes (all zero, half's, one either side) and to random ones.
TEST_CASE("shares_low_bits: every value of a run it names rounds to the run's first result") {
  std::mt19937_64 rng(2026);
  long shared_runs = 0;
  for (const Format& f : preset_formats()) {
    const int shift = 63 - f.mantissa_bits;  // discarded significand bits inside the binades
    for (const Policy& p : kPolicies) {
      const Rounder round(f, p);
      for (const int free_bits : {46, 49, shift - 3, shift / 2}) {
        if (free_bits < 1 || free_bits >= shift) continue;
        const std::uint64_t free_mask = (std::uint64_t{1} << free_bits) - 1;
        const std::uint64_t half = std::uint64_t{1} << (shift - 1);
        const std::uint64_t step = std::uint64_t{1} << free_bits;  // one unit of the fixed discarded bits
        for (int e = f.min_exponent() - 1; e <= f.max_exponent() + 1; ++e) {
          for (const bool sign : {false, true}) {
            for (int trial = 0; trial < 12; ++trial) {
              const std::uint64_t kept = (std::uint64_t{1} << 63) | (rng() & ~((std::uint64_t{1} << shift) - 1));
              const std::uint64_t fixed_patterns[] = {0, step, half, half - step, half + step, (half << 1) - step};
              const std::uint64_t discarded =
                  trial < 6 ? fixed_patterns[trial] : rng() & ((std::uint64_t{1} << shift) - 1) & ~free_mask;
              Unpacked x;
              x.kind = Unpacked::Kind::finite;
              x.sign = sign;
              x.exponent = e;
              x.significand = kept | (discarded & ~free_mask);
              if (!round.shares_low_bits(x, free_bits)) continue;
              ++shared_runs;
              CAPTURE(f.name);
              CAPTURE(describe(p));
              CAPTURE(e);
              CAPTURE(free_bits);
              CAPTURE(x.significand);
              CHECK(p.rounding != Rounding::sr);
              CHECK(e >= f.min_exponent());
              CHECK(e <= f.max_exponent());
              const Conversion first = round(x);
              for (int member = 0; member < 4; ++member) {
                Unpacked y = x;
                const std::uint64_t low = member == 0 ? 0 : member == 1 ? free_mask : rng() & free_mask;
                y.significand = x.significand | low;
                y.sticky = member == 1 || (member == 3 && (rng() & 1) != 0);
                CHECK(round(y) == first);
                CHECK(round_to_format(y, f, p) == first);
              }
            }
          }
        }
      }
    }
  }
  CHECK(shared_runs > 10000);
  // Where it must say no: a run that holds the tie (half or above half),
  // one that holds the exact value (exact or below), a value beyond the
  // binades, and stochastic rounding, whose draw differs per value.
  const Policy rne;
  const Rounder bf16(formats::bf16, rne);
  CHECK(bf16.shares_low_bits(unpack(0x1.0246p0f), 46));  // discarded 0x4600: below half all along
  CHECK(!bf16.shares_low_bits(unpack(std::bit_cast<float>(0x3F808000u)), 46));  // 1 + 2^-8, the tie, and above
  CHECK(!bf16.shares_low_bits(unpack(std::bit_cast<float>(0x3F800020u)), 46));  // 1 exactly, and below
  CHECK(bf16.shares_low_bits(unpack(std::bit_cast<float>(0x3F800040u)), 46));   // the next run: below half
  const Rounder e4m3(formats::e4m3, rne);
  CHECK(!e4m3.shares_low_bits(unpack(0x1.1p20f), 46));  // beyond the range (shared_result's)
  const Policy stochastic{.rounding = Rounding::sr, .random_bit_count = 8};
  const Rounder sr(formats::bf16, stochastic);
  CHECK(!sr.shares_low_bits(unpack(0x1.0246p0f), 46));
}
