#include "fmtcheck/train/exact_math.hpp"

#include <bit>
#include <boost/multiprecision/cpp_bin_float.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>

#include "fmtcheck/core/convert.hpp"

namespace fmtcheck::train {
namespace {

using Wide = boost::multiprecision::cpp_bin_float_50;

// A double result of libm (error below one ulp of double) rounds to the
// correct float32 unless it lies within two ulps of a float32 midpoint, or
// outside float32's normal range; then the value is computed to 50 digits
// and rounded once by the library's core from its decimal text.
bool near_float_midpoint(double y) {
  if (!(std::abs(y) >= std::numeric_limits<float>::min() && std::abs(y) <= std::numeric_limits<float>::max())) {
    return true;
  }
  constexpr std::uint64_t dropped = (std::uint64_t{1} << 29) - 1;  // 52 - 23 fraction bits below float32's
  const std::uint64_t low = std::bit_cast<std::uint64_t>(y) & dropped;
  const std::uint64_t half = std::uint64_t{1} << 28;
  return (low > half ? low - half : half - low) <= 2;
}

float round_wide(const Wide& v) {
  std::ostringstream text;
  text << std::setprecision(60) << std::scientific << v;
  return std::bit_cast<float>(static_cast<std::uint32_t>(convert_text(text.str(), formats::fp32).bits));
}

}  // namespace

float exp_f32(float x) {
  if (std::isnan(x)) return x;
  const double y = std::exp(static_cast<double>(x));
  if (y == 0.0 || std::isinf(y) || !near_float_midpoint(y)) return static_cast<float>(y);
  return round_wide(boost::multiprecision::exp(Wide(x)));
}

float log_f32(float x) {
  if (!(x > 0.0f) || std::isinf(x)) return std::log(x);  // NaN, -inf, +inf: exact cases
  const double y = std::log(static_cast<double>(x));
  if (y == 0.0 || !near_float_midpoint(y)) return static_cast<float>(y);
  return round_wide(boost::multiprecision::log(Wide(x)));
}

std::vector<float> column_sums(std::span<const float> x, std::size_t rows, std::size_t cols) {
  std::vector<float> s(cols, 0.0f);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < cols; ++c) s[c] += x[r * cols + c];
  }
  return s;
}

}  // namespace fmtcheck::train
