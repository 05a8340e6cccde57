// matmul_fma's vector, multithreaded kernel against its definition written
// here as the plain loop of std::fma (libm's fused multiply-add): the same
// bits for every element, on shapes that leave partial panels and row
// blocks, long chains, values across float32's range with subnormals and
// signed zeros, and NaN and infinity.
#include <doctest/doctest.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "fmtcheck/core/random.hpp"
#include "fmtcheck/train/exact_math.hpp"

namespace {

std::vector<float> definition(const std::vector<float>& a, const std::vector<float>& b, std::size_t m,
                              std::size_t n, std::size_t k) {
  std::vector<float> c(m * n);
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (std::size_t p = 0; p < k; ++p) acc = std::fma(a[i * k + p], b[j * k + p], acc);
      c[i * n + j] = acc;
    }
  }
  return c;
}

// Values whose products and sums round at every step: random significands,
// exponents over [-spread, spread], every 17th a subnormal or a signed zero,
// and with `specials` every 101st an infinity or a NaN.
std::vector<float> values(std::size_t count, std::uint64_t seed, int spread, bool specials) {
  std::vector<float> out(count);
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint64_t r = fmtcheck::splitmix64(seed, i);
    const float sign = (r & 1) ? -1.0f : 1.0f;
    const float significand = 1.0f + static_cast<float>((r >> 1) & 0x7FFFFF) * 0x1.0p-23f;
    const int exponent = static_cast<int>((r >> 24) % (2 * spread + 1)) - spread;
    out[i] = sign * std::ldexp(significand, exponent);
    if (i % 17 == 5) out[i] = sign * std::bit_cast<float>(static_cast<std::uint32_t>((r >> 32) & 0x7FFFFF));
    if (specials && i % 101 == 7) out[i] = (r >> 40) & 1 ? sign * INFINITY : NAN;
  }
  return out;
}

void check(std::size_t m, std::size_t n, std::size_t k, int spread, bool specials) {
  CAPTURE(m);
  CAPTURE(n);
  CAPTURE(k);
  const auto a = values(m * k, 1 + m, spread, specials), b = values(n * k, 2 + n, spread, specials);
  const std::vector<float> got = fmtcheck::train::matmul_fma(a, b, m, n, k), want = definition(a, b, m, n, k);
  REQUIRE(got.size() == want.size());
  std::size_t bad = 0;
  for (std::size_t e = 0; e < got.size(); ++e) {
    const bool same = std::isnan(want[e]) ? std::isnan(got[e])
                                          : std::bit_cast<std::uint32_t>(got[e]) == std::bit_cast<std::uint32_t>(want[e]);
    if (!same && ++bad <= 3) FAIL_CHECK("C[" << e / n << "][" << e % n << "] = " << got[e] << ", fma chain " << want[e]);
  }
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("matmul_fma equals the chain of std::fma, element for element") {
  for (const auto& [m, n, k] : std::vector<std::array<std::size_t, 3>>{
           {1, 1, 1}, {1, 1, 0}, {3, 5, 7}, {4, 16, 9}, {5, 17, 33}, {7, 33, 100}, {1, 70, 257}, {9, 3, 64}}) {
    check(m, n, k, 20, false);
    check(m, n, k, 126, false);  // products overflow and underflow float32
  }
}

TEST_CASE("matmul_fma propagates NaN and infinity as the fma chain does") {
  check(6, 21, 50, 10, true);
}

TEST_CASE("matmul_fma on every thread gives the same bits (a GEMM large enough to share out)") {
  check(64, 300, 256, 20, false);  // 4.9 M multiply-adds: two threads or more wherever there are two cores
  check(1, 4100, 1100, 20, false);  // one row, split between threads by panels
}
