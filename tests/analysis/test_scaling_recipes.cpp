// The scaling state machines on hand-computed sequences (each expected value
// worked out from the recipe's rules in the comment beside it).
#include <cfloat>
#include <cmath>
#include <doctest/doctest.h>
#include <vector>

#include "fmtcheck/analysis/analysis.hpp"
#include "fmtcheck/analysis/scaling.hpp"
#include "fmtcheck/core/format.hpp"

using namespace fmtcheck;

TEST_CASE("GradScaler: torch defaults grow after 2000 finite steps and halve on overflow") {
  GradScaler s;
  CHECK(s.scale() == 65536.0);
  for (int i = 0; i < 1999; ++i) CHECK_FALSE(s.update(false));
  CHECK(s.scale() == 65536.0);
  CHECK_FALSE(s.update(false));  // the 2000th consecutive finite step
  CHECK(s.scale() == 131072.0);
  CHECK(s.update(true));  // skipped
  CHECK(s.scale() == 65536.0);
  for (int i = 0; i < 1999; ++i) s.update(false);  // the overflow reset the counter
  CHECK(s.scale() == 65536.0);
  s.update(false);
  CHECK(s.scale() == 131072.0);
}

TEST_CASE("GradScaler: Megatron hysteresis and minimum scale") {
  GradScalerConfig c;
  c.init_scale = 8;
  c.hysteresis = 2;
  c.min_scale = 2;
  c.growth_interval = 3;
  GradScaler s(c);
  // budget 2: the first overflow only spends one, the second halves 8 -> 4,
  // the third 4 -> 2, the fourth would give 1 but the floor is 2.
  const std::vector<std::pair<bool, double>> steps = {{true, 8}, {true, 4}, {true, 2}, {true, 2},
                                                      // three finite steps grow 2 -> 4 and restore the budget
                                                      {false, 2}, {false, 2}, {false, 4},
                                                      // so the next overflow is tolerated again
                                                      {true, 4}, {true, 2}};
  for (const auto& [inf, scale_after] : steps) {
    CHECK(s.update(inf) == inf);
    CHECK(s.scale() == scale_after);
  }
}

TEST_CASE("DeepSpeedLossScaler: DynamicLossScaler.update_scale rule for rule") {
  DeepSpeedScalerConfig c;
  c.init_scale = 8;
  c.scale_window = 3;
  c.min_scale = 2;  // hysteresis 2: DeepSpeed's default
  DeepSpeedLossScaler s(c);
  // iter: overflow? -> scale after. Growth needs stable = iter - last_overflow - 1 to be a
  // positive multiple of 3: iters 0..3 are stable 0..3, so the scale doubles after iter 3
  // (torch would after iter 2). iter 4 overflows: budget 2 -> 1, no backoff. iter 5: halves
  // (16 -> 8), budget stays 1. iter 6 halves to 4; iter 7 to the floor 2; iter 8 is an
  // overflow at the minimum (DeepSpeed raises there). iters 9..12: stable 0..3 -> double after 12.
  const std::vector<std::pair<bool, double>> steps = {{false, 8},  {false, 8}, {false, 8}, {false, 16}, {true, 16},
                                                      {true, 8},   {true, 4},  {true, 2},  {true, 2},   {false, 2},
                                                      {false, 2}, {false, 2}, {false, 4}};
  for (const auto& [overflow, scale_after] : steps) {
    CHECK(s.update(overflow) == overflow);
    CHECK(s.scale() == scale_after);
  }
  CHECK(s.overflows_at_min_scale() == 1);
}

TEST_CASE("DeepSpeedLossScaler: consecutive_hysteresis refills the budget on every finite step") {
  DeepSpeedScalerConfig c;
  c.consecutive_hysteresis = true;  // hysteresis 2, window 1000, init 2^16
  DeepSpeedLossScaler s(c);
  for (const bool overflow : {true, false, true, false, true}) s.update(overflow);
  CHECK(s.scale() == 65536.0);  // every overflow was followed by a refill
  s.update(true);               // the second in a row backs off
  CHECK(s.scale() == 32768.0);
}

TEST_CASE("fp8_scale_from_amax: Transformer Engine's float32 formula and its guards") {
  CHECK(fp8_scale_from_amax(2.0f, 448.0f, 0, 1.0f) == 224.0f);
  CHECK(fp8_scale_from_amax(2.0f, 448.0f, 3, 1.0f) == 28.0f);    // / 2^3
  CHECK(fp8_scale_from_amax(3.0f, 448.0f, 0, 1.0f) == 448.0f / 3.0f);  // rounded once, in float32
  CHECK(fp8_scale_from_amax(0.0f, 448.0f, 0, 5.0f) == 5.0f);     // amax 0 keeps the scale
  CHECK(fp8_scale_from_amax(NAN, 448.0f, 0, 5.0f) == 5.0f);
  CHECK(fp8_scale_from_amax(INFINITY, 448.0f, 0, 5.0f) == 5.0f);
  CHECK(fp8_scale_from_amax(1e-45f, 57344.0f, 0, 5.0f) == FLT_MAX);  // 57344 / 2^-149 overflows float32
}

TEST_CASE("DelayedScaling: window of max and most recent") {
  DelayedScaling max2(448.0f, 2, AmaxCompute::max);
  DelayedScaling recent(448.0f, 2, AmaxCompute::most_recent);
  // amaxes 1, 2, 0.5, 0.5, NaN: windows [1] [1,2] [2,.5] [.5,.5] [.5,NaN]
  const std::vector<float> amax = {1, 2, 0.5f, 0.5f, NAN};
  const std::vector<float> want_max = {448, 224, 224, 896, 896};  // NaN window keeps 896
  const std::vector<float> want_recent = {448, 224, 896, 896, 896};
  CHECK(max2.scale() == 1.0f);
  for (std::size_t i = 0; i < amax.size(); ++i) {
    max2.update(amax[i]);
    recent.update(amax[i]);
    CHECK(max2.scale() == want_max[i]);
    CHECK(recent.scale() == want_recent[i]);
  }
}

TEST_CASE("MX block scale exponents by rule") {
  // e4m3: emax 8, max 448. amax 1000: ocp floor(log2 1000) - 8 = 9 - 8 = 1;
  // ceil: 1000/448 = 2.23 -> 2^2; rne: nearest power of two to 2.23 is 2^1.
  CHECK(block_scale_exponent(1000, formats::e4m3, BlockScaleRule::ocp) == 1);
  CHECK(block_scale_exponent(1000, formats::e4m3, BlockScaleRule::ceil) == 2);
  CHECK(block_scale_exponent(1000, formats::e4m3, BlockScaleRule::rne) == 1);
  // e2m1: emax 2, max 6. amax 6: ocp 2 - 2 = 0; ceil 6/6 = 1 -> 0. amax 7: ceil 7/6 -> 2^1.
  CHECK(block_scale_exponent(6, formats::e2m1, BlockScaleRule::ocp) == 0);
  CHECK(block_scale_exponent(6, formats::e2m1, BlockScaleRule::ceil) == 0);
  CHECK(block_scale_exponent(7, formats::e2m1, BlockScaleRule::ceil) == 1);
  // E8M0's range clamps: 2^-140 -> 2^-127; zero block -> 2^0.
  CHECK(block_scale_exponent(std::ldexp(1.0, -140), formats::e2m1, BlockScaleRule::ocp) == -127);
  CHECK(block_scale_exponent(0, formats::e2m1, BlockScaleRule::ocp) == 0);
}

TEST_CASE("best_pow2_exponent: largest 2^k with amax * 2^k <= max") {
  CHECK(best_pow2_exponent(1.0, formats::e4m3) == 8);     // 256 <= 448 < 512
  CHECK(best_pow2_exponent(448.0, formats::e4m3) == 0);
  CHECK(best_pow2_exponent(449.0, formats::e4m3) == -1);
  CHECK(best_pow2_exponent(65504.0, formats::fp16) == 0);
  CHECK_FALSE(best_pow2_exponent(0.0, formats::fp16).has_value());
}
