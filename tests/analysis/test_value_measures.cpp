// value_measures.hpp is the per-value definition the GPU's analysis runs;
// the CPU's analysis (analysis.cpp) measures with SIMD lanes. Both must
// agree: every count and the largest errors exactly, the sums (taken in
// another order) to rounding. And an MX block's scale exponent against the
// rules written out with frexp.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <random>
#include <vector>

#include "fmtcheck/analysis/analysis.hpp"
#include "fmtcheck/analysis/value_measures.hpp"
#include "fmtcheck/core/decode.hpp"
#include "fmtcheck/core/round_to_format.hpp"

using namespace fmtcheck;

namespace {

bool close(double a, double b) { return a == b || std::fabs(a - b) <= 1e-12 * std::fabs(b); }

}  // namespace

TEST_CASE("the per-value measures equal the CPU's SIMD analysis") {
  std::mt19937 rng(3);
  std::vector<float> x(100003);
  for (auto& v : x) v = std::bit_cast<float>(static_cast<std::uint32_t>(rng()));  // every kind of float32
  for (std::size_t i = 0; i < x.size(); i += 3) x[i] = std::ldexp(static_cast<float>(rng() % 1000) - 500.0f, -8);
  Policy sat;
  sat.overflow = Overflow::sat;
  int compared = 0;
  for (const char* name : {"fp16", "bf16", "e4m3", "e2m1", "binary8p3se", "e6m9"}) {
    const Format f = *parse_format(name);
    for (const float scale : {1.0f, 0.375f, 0x1p-3f}) {
      for (const Policy& p : {Policy{}, sat}) {
        CAPTURE(name);
        CAPTURE(scale);
        ConversionStats simd;
        ScaledConversion(f, p, scale).measure(x, 0, simd);
        const double s = scale;
        const bool pow2 = s == std::ldexp(1.0, std::ilogb(s));
        FlagCounts flags;
        ValueErrors e;
        for (const float v : x) {
          const float scaled = scale != 1.0f ? v * scale : v;
          const Conversion c = round_to_format(unpack_float32(std::bit_cast<std::uint32_t>(scaled)), f, p);
          flags.add(c.flags);
          add_value_errors(v, to_double(f, c.bits), s, pow2, 1.0 / s, e);
        }
        ConversionStats scalar;
        scalar.add(flags);
        scalar.add(e);
        CHECK(scalar.values == simd.values);
        CHECK(scalar.exact == simd.exact);
        CHECK(scalar.inexact == simd.inexact);
        CHECK(scalar.overflow == simd.overflow);
        CHECK(scalar.saturated == simd.saturated);
        CHECK(scalar.underflow_to_zero == simd.underflow_to_zero);
        CHECK(scalar.subnormal == simd.subnormal);
        CHECK(scalar.nan_in == simd.nan_in);
        CHECK(scalar.inf_in == simd.inf_in);
        CHECK(scalar.nan_produced == simd.nan_produced);
        CHECK(scalar.nonfinite_out == simd.nonfinite_out);
        CHECK(scalar.error_count == simd.error_count);
        CHECK(scalar.rel_error_count == simd.rel_error_count);
        CHECK(scalar.max_abs_error == simd.max_abs_error);
        CHECK(scalar.max_rel_error == simd.max_rel_error);
        CHECK(close(scalar.sum_rel_error, simd.sum_rel_error));
        CHECK(close(scalar.sum_sq_rel_error, simd.sum_sq_rel_error));
        ++compared;
      }
    }
  }
  CHECK(compared == 36);
}

TEST_CASE("an MX block's scale exponent follows its rule") {
  std::mt19937 rng(4);
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  for (const Format& f : {formats::e4m3, formats::e5m2, formats::e2m1}) {
    const double max = to_double(f, f.to_storage(f.max_finite_code()));
    for (int i = 0; i < 20000; ++i) {
      const double amax = std::ldexp(mantissa(rng), static_cast<int>(rng() % 300) - 150);
      const auto clamp = [](int k) { return std::max(-127, std::min(127, k)); };
      // ocp: floor(log2 amax) - emax_elem. ceil: the smallest 2^k >= amax / max.
      CHECK(block_scale_exponent(amax, f, BlockScaleRule::ocp) == clamp(std::ilogb(amax) - f.max_exponent()));
      CHECK(block_scale_exponent(amax, f, BlockScaleRule::ceil) == clamp(static_cast<int>(std::ceil(std::log2(amax / max)))));
    }
    CHECK(block_scale_exponent(0.0, f, BlockScaleRule::ocp) == 0);
    CHECK(block_scale_exponent(INFINITY, f, BlockScaleRule::rne) == 0);
  }
}
