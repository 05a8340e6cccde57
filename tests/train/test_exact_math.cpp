// exp_f32 and log_f32 against 50-digit Boost.Multiprecision values rounded
// to float32 here by comparing the two float32 neighbours' distances (ties
// to even), a route that shares nothing with the library's (glibc's double
// result, a midpoint check, decimal text through the rounding core).
#include <doctest/doctest.h>

#include <bit>
#include <boost/multiprecision/cpp_bin_float.hpp>
#include <cmath>
#include <cstdint>
#include <limits>

#include "fmtcheck/core/random.hpp"
#include "fmtcheck/train/exact_math.hpp"

namespace {

using Wide = boost::multiprecision::cpp_bin_float_50;

// The float32 nearest to v (ties to even), for v within float32's finite range.
float nearest(const Wide& v) {
  float f = static_cast<float>(static_cast<double>(v));
  for (int i = 0; i < 2; ++i) {  // the candidate is at most one float32 away
    const float down = std::nextafter(f, -INFINITY), up = std::nextafter(f, INFINITY);
    const Wide d = abs(v - Wide(f)), dd = abs(v - Wide(down)), du = abs(v - Wide(up));
    const auto even = [](float x) { return (std::bit_cast<std::uint32_t>(x) & 1u) == 0; };
    if (dd < d || (dd == d && even(down))) {
      f = down;
    } else if (du < d || (du == d && even(up))) {
      f = up;
    }
  }
  return f;
}

float uniform(std::uint64_t i, float lo, float hi) {
  const double u = static_cast<double>(fmtcheck::splitmix64(23, i) >> 11) * 0x1.0p-53;
  return static_cast<float>(lo + (hi - lo) * u);
}

}  // namespace

TEST_CASE("exp_f32 is correctly rounded on 60,000 inputs from -103 to 88.7") {
  int checked = 0;
  for (std::uint64_t i = 0; i < 60000; ++i) {
    // Mostly the softmax range [-20, 0]; some down into float32's subnormals and up to its max.
    const float x = i % 3 == 0 ? uniform(i, -103.0f, 88.7f) : uniform(i, -20.0f, 0.0f);
    const float expected = nearest(boost::multiprecision::exp(Wide(x)));
    REQUIRE_MESSAGE(std::bit_cast<std::uint32_t>(fmtcheck::train::exp_f32(x)) == std::bit_cast<std::uint32_t>(expected),
                    "x = " << x);
    ++checked;
  }
  CHECK(checked == 60000);
  CHECK(fmtcheck::train::exp_f32(0.0f) == 1.0f);
  CHECK(fmtcheck::train::exp_f32(-INFINITY) == 0.0f);
  CHECK(std::isinf(fmtcheck::train::exp_f32(89.0f)));
}

TEST_CASE("log_f32 is correctly rounded on 60,000 inputs from 2^-149 to 2^128") {
  for (std::uint64_t i = 0; i < 60000; ++i) {
    // A softmax sum lies in [1, classes]; the rest spread over every binade.
    const float x = i % 3 == 0 ? std::ldexp(uniform(i, 1.0f, 2.0f), static_cast<int>(i % 277) - 149)
                               : uniform(i, 1.0f, 16.0f);
    const float expected = nearest(boost::multiprecision::log(Wide(x)));
    REQUIRE_MESSAGE(std::bit_cast<std::uint32_t>(fmtcheck::train::log_f32(x)) == std::bit_cast<std::uint32_t>(expected),
                    "x = " << x);
  }
  CHECK(fmtcheck::train::log_f32(1.0f) == 0.0f);
  CHECK(fmtcheck::train::log_f32(0.0f) == -INFINITY);
  CHECK(std::isnan(fmtcheck::train::log_f32(-1.0f)));
}
