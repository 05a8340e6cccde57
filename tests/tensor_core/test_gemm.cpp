// The GEMM kernel is an optimisation of dot_product_add: bit for bit the same
// on random matrices of every input type (zeros, subnormals, NaN and
// infinities included), for every preset, with scales, promotion and split-K.
#include <bit>
#include <cmath>
#include <doctest/doctest.h>
#include <random>
#include <stdexcept>
#include <vector>

#include "fmtcheck/gemm.hpp"
#include "fmtcheck/tensor_core.hpp"

using namespace fmtcheck;

namespace {

// Random container bits of f; specials (NaN, inf) only when allowed.
std::vector<std::uint32_t> random_matrix(const Format& f, std::size_t count, bool specials, std::mt19937& rng) {
  std::vector<std::uint32_t> out(count);
  for (auto& v : out) {
    do {
      v = static_cast<std::uint32_t>(f.to_storage(rng() & ((1u << f.width()) - 1)));
      // Exponents near the top overflow fp32 sums too often to be useful.
      const auto cls = classify(f, v);
      if (!specials && (cls == ValueClass::nan || cls == ValueClass::inf)) continue;
      if (rng() % 4 == 0) v = 0;  // zeros are common in real tensors
      break;
    } while (true);
  }
  return out;
}

// The documented GEMM, element by element, on the reference dot_product_add.
float reference_element(const GemmConfig& g, std::size_t n, std::size_t k, const std::vector<std::uint32_t>& a,
                        const std::vector<std::uint32_t>& b, float c, std::size_t i, std::size_t j) {
  const std::size_t slice = (k + g.split_k - 1) / g.split_k;
  const std::size_t chunk = g.promote_every == 0 ? std::max<std::size_t>(slice, 1) : g.promote_every;
  const float scale = g.scale_a * g.scale_b;
  float total = 0;
  for (std::size_t s = 0; s < g.split_k; ++s) {
    const std::size_t s0 = std::min(k, s * slice), s1 = std::min(k, s0 + slice);
    float acc = s == 0 ? c : 0.0f;
    for (std::size_t k0 = s0; k0 < s1; k0 += chunk) {
      std::vector<std::uint64_t> av, bv;
      for (std::size_t q = k0; q < std::min(s1, k0 + chunk); ++q) {
        av.push_back(a[i * k + q]);
        bv.push_back(b[q * n + j]);
      }
      const auto p = static_cast<std::uint32_t>(dot_product_add(g.model, g.input, av, bv, 0, formats::fp32).bits);
      acc = std::fma(std::bit_cast<float>(p), scale, acc);
    }
    total = s == 0 ? acc : total + acc;
  }
  return total;
}

bool same_bits(float x, float y) {
  // NaNs from fma and additions may differ in payload only.
  return std::bit_cast<std::uint32_t>(x) == std::bit_cast<std::uint32_t>(y) || (std::isnan(x) && std::isnan(y));
}

void check_gemm(const GemmConfig& g, std::size_t m, std::size_t n, std::size_t k, bool specials, std::mt19937& rng) {
  const auto a = random_matrix(g.input, m * k, specials, rng);
  const auto b = random_matrix(g.input, k * n, specials, rng);
  std::vector<float> c(m * n), d(m * n);
  std::normal_distribution<float> normal;
  for (float& x : c) x = normal(rng);
  gemm(g, m, n, k, a, b, c, d);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      const float want = reference_element(g, n, k, a, b, c[i * n + j], i, j);
      if (!same_bits(d[i * n + j], want) && ++bad <= 3) {
        FAIL_CHECK("D[" << i << "][" << j << "] = " << d[i * n + j] << ", reference " << want);
      }
    }
  }
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("gemm equals dot_product_add for every preset and input type") {
  std::mt19937 rng(20250101);
  for (const TensorCoreModel& model : tensor_core_models()) {
    for (const Format* f : {&formats::fp16, &formats::bf16, &formats::tf32, &formats::e4m3, &formats::e5m2}) {
      const auto dot = model.for_input(*f);
      if (!dot) continue;
      CAPTURE(model.name);
      CAPTURE(f->name);
      GemmConfig g;
      g.model = *dot;
      g.input = *f;
      check_gemm(g, 5, 7, 45, false, rng);  // K not a multiple of any block size
    }
  }
}

TEST_CASE("gemm with scales, promotion and split-K equals its definition") {
  std::mt19937 rng(7);
  const DotModel hopper = *find_tensor_core_model("hopper-wgmma")->for_input(formats::e4m3);
  for (const std::size_t promote : {std::size_t{0}, std::size_t{32}, std::size_t{128}, std::size_t{40}}) {
    for (const std::size_t split : {std::size_t{1}, std::size_t{3}}) {
      CAPTURE(promote);
      CAPTURE(split);
      GemmConfig g;
      g.model = hopper;
      g.input = formats::e4m3;
      g.scale_a = 0.375f;
      g.scale_b = 3.0e-3f;
      g.promote_every = promote;
      g.split_k = split;
      g.threads = 2;
      check_gemm(g, 6, 5, 300, false, rng);
    }
  }
}

TEST_CASE("gemm hands NaN and infinity to the reference and agrees with it") {
  std::mt19937 rng(11);
  for (const Format* f : {&formats::e5m2, &formats::fp16}) {
    CAPTURE(f->name);
    GemmConfig g;
    g.model = *find_tensor_core_model("hopper-wgmma")->for_input(*f);
    g.input = *f;
    check_gemm(g, 8, 8, 64, true, rng);
  }
}

TEST_CASE("gemm rejects sizes that do not match") {
  GemmConfig g;
  g.model = *find_tensor_core_model("hopper-wgmma")->for_input(formats::e4m3);
  std::vector<std::uint32_t> a(6), b(6);
  std::vector<float> c(4), d(4);
  CHECK_THROWS_AS(gemm(g, 2, 2, 2, a, b, c, d), std::invalid_argument);
}
