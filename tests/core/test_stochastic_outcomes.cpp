// stochastic_outcomes (a bisection over the draws) against rounding with
// every one of the 2^k draws, one by one, for k up to 10: every value of
// several binades of each format, tiny values under both tininess rules,
// values at the overflow threshold with and without saturation, and each
// stochastic mode; and the hand-worked distribution of 0.1 into E4M3.
#include <doctest/doctest.h>

#include <bit>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <vector>

#include "fmtcheck/core/convert.hpp"
#include "fmtcheck/core/stochastic_outcomes.hpp"
#include "fmtcheck/core/unpacked.hpp"

using namespace fmtcheck;

namespace {

// Every draw's result, counted; runs of equal results kept in draw order.
std::vector<StochasticOutcome> every_draw(const Unpacked& x, const Format& f, Policy p) {
  std::vector<StochasticOutcome> out;
  for (std::uint64_t r = 0; r < (std::uint64_t{1} << p.random_bit_count); ++r) {
    p.random_bits = static_cast<std::uint32_t>(r);
    const Conversion c = round_to_format(x, f, p);
    if (!out.empty() && out.back().result == c) {
      ++out.back().draws;
    } else {
      out.push_back({c, 1});
    }
  }
  return out;
}

bool same(const std::vector<StochasticOutcome>& a, const std::vector<StochasticOutcome>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!(a[i].result == b[i].result) || a[i].draws != b[i].draws) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("every outcome and its draws, as rounding with each draw gives them") {
  const Format* formats_checked[] = {&formats::e4m3, &formats::e5m2, &formats::fp16, &formats::bf16, &formats::e2m1,
                                     &formats::e8m0};
  const Rounding modes[] = {Rounding::sr, Rounding::sr_rne, Rounding::sr_rna, Rounding::sr_rno};
  std::uint64_t checked = 0, several = 0, three = 0;
  for (const Format* f : formats_checked) {
    // Float32 inputs from far below the smallest subnormal to past the
    // largest value, every 4099th bit pattern, both signs.
    std::vector<float> inputs;
    for (std::uint32_t bits = 0x00000001; bits < 0x7F800000; bits += 4099 * 997) {
      inputs.push_back(std::bit_cast<float>(bits));
      inputs.push_back(-std::bit_cast<float>(bits));
    }
    for (const Rounding mode : modes) {
      for (const int k : {1, 3, 7, 10}) {
        for (const Tininess tininess : {Tininess::after, Tininess::before}) {
          for (const Overflow overflow : {Overflow::nosat, Overflow::sat}) {
            Policy p;
            p.rounding = mode;
            p.random_bit_count = k;
            p.tininess = tininess;
            p.overflow = overflow;
            for (const float v : inputs) {
              const Unpacked x = unpack(v);
              const auto got = stochastic_outcomes(x, *f, p);
              const auto want = every_draw(x, *f, p);
              INFO(f->name << " mode " << static_cast<int>(mode) << " k " << k << " input " << v);
              REQUIRE(same(got, want));
              ++checked;
              several += got.size() > 1;
              three += got.size() > 2;
            }
          }
        }
      }
    }
  }
  MESSAGE(checked << " distributions checked, " << several << " with more than one outcome, " << three
                  << " with three");
  CHECK(several > checked / 4);  // the check is not about constants
  // Just below the smallest normal under tininess after, the underflow flag
  // and the result change at different draws: three outcomes.
  CHECK(three > 0);
}

TEST_CASE("0.1 into E4M3 with 8 random bits, worked by hand") {
  // 0.1 / 2^-7 (E4M3's spacing in [2^-4, 2^-3)) = 12.8: the neighbours are
  // 12 * 2^-7 (0x1c) and 13 * 2^-7 (0x1d), and the discarded 0.8 of a
  // spacing has 204 (floor(0.8 * 256)) as its top 8 bits, so draws
  // 52..255 (204 of them) round up.
  Policy p;
  p.rounding = Rounding::sr;
  p.random_bit_count = 8;
  const auto got = stochastic_outcomes(unpack(0.1), formats::e4m3, p);
  REQUIRE(got.size() == 2);
  CHECK(got[0].result.bits == 0x1C);
  CHECK(got[0].draws == 52);
  CHECK(got[1].result.bits == 0x1D);
  CHECK(got[1].draws == 204);
}

TEST_CASE("32 random bits: the draws add up to 2^32") {
  Policy p;
  p.rounding = Rounding::sr;
  p.random_bit_count = 32;
  for (const double v : {0.1, 1.0 / 3, 65519.0, 1e-8, 448.0}) {
    std::uint64_t total = 0;
    for (const auto& o : stochastic_outcomes(unpack(v), formats::fp16, p)) total += o.draws;
    CHECK(total == std::uint64_t{1} << 32);
  }
}

TEST_CASE("deterministic modes and bad bit counts are refused") {
  CHECK_THROWS_AS(stochastic_outcomes(unpack(0.1), formats::fp16, Policy{}), std::invalid_argument);
  Policy p;
  p.rounding = Rounding::sr;
  p.random_bit_count = 0;
  CHECK_THROWS_AS(stochastic_outcomes(unpack(0.1), formats::fp16, p), std::invalid_argument);
}
