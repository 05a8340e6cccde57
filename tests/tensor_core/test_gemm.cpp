// The GEMM kernel is an optimisation of dot_product_add: bit for bit the same
// on random matrices of every input type (zeros, subnormals, NaN and
// infinities included), for every preset, with scales, promotion and split-K.
#include <bit>
#include <cmath>
#include <doctest/doctest.h>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "fmtcheck/core/convert.hpp"
#include "fmtcheck/core/decode.hpp"
#include "fmtcheck/tensor_core/gemm.hpp"
#include "fmtcheck/tensor_core/gemm_kernel.hpp"
#include "fmtcheck/tensor_core/tensor_core.hpp"

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
    float acc = 0;
    for (std::size_t k0 = s0; k0 < s1; k0 += chunk) {
      std::vector<std::uint64_t> av, bv;
      for (std::size_t q = k0; q < std::min(s1, k0 + chunk); ++q) {
        av.push_back(a[i * k + q]);
        bv.push_back(b[q * n + j]);
      }
      const std::uint64_t p =
          dot_product_add(g.model, g.input, g.input_b.value_or(g.input), av, bv, 0, g.accumulator).bits;
      acc += static_cast<float>(to_double(g.accumulator, p));
    }
    total = s == 0 ? acc : total + acc;
  }
  return std::fma(scale, total, c);
}

bool same_bits(float x, float y) {
  // NaNs from fma and additions may differ in payload only.
  return std::bit_cast<std::uint32_t>(x) == std::bit_cast<std::uint32_t>(y) || (std::isnan(x) && std::isnan(y));
}

void check_gemm(const GemmConfig& g, std::size_t m, std::size_t n, std::size_t k, bool specials, std::mt19937& rng) {
  const auto a = random_matrix(g.input, m * k, specials, rng);
  const auto b = random_matrix(g.input_b.value_or(g.input), k * n, specials, rng);
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
    for (const Format* f : {&formats::fp16, &formats::bf16, &formats::tf32, &formats::e4m3, &formats::e5m2,
                            &formats::e4m3fnuz, &formats::e5m2fnuz}) {
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

TEST_CASE("gemm with fp16 accumulators equals dot_product_add chained through fp16") {
  std::mt19937 rng(16);
  for (const char* name : {"volta", "ampere", "hopper", "blackwell"}) {
    for (const std::size_t promote : {std::size_t{0}, std::size_t{32}}) {
      CAPTURE(name);
      CAPTURE(promote);
      GemmConfig g;
      g.model = *find_tensor_core_model(name)->for_input(formats::fp16);
      g.input = formats::fp16;
      g.accumulator = formats::fp16;
      g.promote_every = promote;
      check_gemm(g, 5, 6, 77, false, rng);  // random fp16 bits: many sums overflow fp16 to infinity
    }
  }
}

TEST_CASE("gemm with E4M3 x E5M2 operands equals dot_product_add, with both accumulators") {
  std::mt19937 rng(45);
  for (const char* name : {"hopper-wgmma", "hopper", "blackwell-tcgen05"}) {
    for (const Format* acc : {&formats::fp32, &formats::fp16}) {
      CAPTURE(name);
      CAPTURE(acc->name);
      GemmConfig g;
      g.model = *find_tensor_core_model(name)->for_inputs(formats::e4m3, formats::e5m2);
      g.input = formats::e4m3;
      g.input_b = formats::e5m2;
      g.accumulator = *acc;
      g.promote_every = 64;
      check_gemm(g, 4, 5, 150, false, rng);
    }
  }
}

TEST_CASE("mixed operands: A is read as E4M3 and B as E5M2") {
  // 0x3c is 1.5 in E4M3 and 1.0 in E5M2: D = 1.5 only if each side is read
  // in its own format (2.25 if both were E4M3, 1.0 if both were E5M2).
  const std::vector<std::uint32_t> a{0x3c}, b{0x3c};
  const std::vector<float> c(1, 0.0f);
  std::vector<float> d(1);
  for (const char* name : {"hopper-wgmma", "hopper"}) {
    CAPTURE(name);
    GemmConfig g;
    g.model = *find_tensor_core_model(name)->for_inputs(formats::e4m3, formats::e5m2);
    g.input = formats::e4m3;
    g.input_b = formats::e5m2;
    gemm(g, 1, 1, 1, a, b, c, d);
    CHECK(d[0] == 1.5f);
  }
}

TEST_CASE("AMD matrix cores accumulate in fp32 only") {
  GemmConfig g;
  g.model = *find_tensor_core_model("mi300x")->for_input(formats::fp16);
  g.input = formats::fp16;
  g.accumulator = formats::fp16;
  const std::vector<std::uint32_t> a(4), b(4);
  const std::vector<float> c(1);
  std::vector<float> d(1);
  CHECK_THROWS_AS(gemm(g, 1, 1, 4, a, b, c, d), std::invalid_argument);
}

TEST_CASE("fp16 accumulators: each block's D is rounded to fp16 before the next block") {
  // Hopper fp16 (L = 16): block 1 is 1*1 + 2^-11*1 = 1 + 2^-11, a tie in
  // fp16 that goes to even: 1. Block 2 adds 2^-11 to that C = 1: 1 again.
  // With an fp32 accumulator block 1 keeps 1 + 2^-11 and block 2 gives
  // 1 + 2^-10 (0x3f802000).
  std::vector<std::uint32_t> a(32, 0), b(32, 0);
  a[0] = 0x3c00, b[0] = 0x3c00;   // 1 * 1
  a[1] = 0x1000, b[1] = 0x3c00;   // 2^-11 * 1
  a[16] = 0x1000, b[16] = 0x3c00;
  GemmConfig g;
  g.model = *find_tensor_core_model("hopper")->for_input(formats::fp16);
  g.input = formats::fp16;
  const std::vector<float> c(1, 0.0f);
  std::vector<float> d(1);
  g.accumulator = formats::fp16;
  gemm(g, 1, 1, 32, a, b, c, d);
  CHECK(std::bit_cast<std::uint32_t>(d[0]) == 0x3f800000u);
  g.accumulator = formats::fp32;
  gemm(g, 1, 1, 32, a, b, c, d);
  CHECK(std::bit_cast<std::uint32_t>(d[0]) == 0x3f802000u);
}

TEST_CASE("promotion is an fp32 addition and the scale comes once, in the epilogue") {
  // Hopper fp16, promote every 16, scale 3. Chunk 1: (1 + 2^-10)^2 + 2^-12 *
  // 2^-11 = p1 = 1 + 2^-9 + 2^-20 + 2^-23 (exact at F = 25, and in fp32).
  // Chunk 2: 1*1 = 1. In units u = 2^-23: p1 = 8405001u, p1 + 1 = 16793609u,
  // which in [2, 4) (step 2u) is a tie that goes to even: 16793608u. Then
  // 3 * 16793608u = 50380824u is exact in [4, 8) (step 4u): D = 6 + 3*2^-9 +
  // 3*2^-20 = 0x40c03006. Fusing the scale into each promotion, as
  // fma(p, 3, acc), rounds 3*p1 = 25215003u to 25215004u first and gives
  // 50380828u = 0x40c03007 instead.
  std::vector<std::uint32_t> a(32, 0), b(32, 0);
  a[0] = 0x3c01, b[0] = 0x3c01;  // 1 + 2^-10
  a[1] = 0x0c00, b[1] = 0x1000;  // 2^-12, 2^-11
  a[16] = 0x3c00, b[16] = 0x3c00;
  GemmConfig g;
  g.model = *find_tensor_core_model("hopper")->for_input(formats::fp16);
  g.input = formats::fp16;
  g.scale_a = 3.0f;
  g.promote_every = 16;
  const std::vector<float> c(1, 0.0f);
  std::vector<float> d(1);
  gemm(g, 1, 1, 32, a, b, c, d);
  CHECK(std::bit_cast<std::uint32_t>(d[0]) == 0x40c03006u);
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

TEST_CASE("gemm spreads outputs over threads, a single row too, with the same bits") {
  // Outputs, not rows, are shared out: a one-row GEMM (a token at a time)
  // splits its row between threads; threads = 0 sizes the count by the
  // products (1 x 700 x 1000 is enough for two threads wherever there are two).
  std::mt19937 rng(13);
  GemmConfig g;
  g.model = *find_tensor_core_model("hopper-wgmma")->for_input(formats::bf16);
  g.input = formats::bf16;
  for (const unsigned threads : {3u, 0u}) {
    CAPTURE(threads);
    g.threads = threads;
    check_gemm(g, 1, 700, 1000, false, rng);
    check_gemm(g, 5, 3, 64, true, rng);  // fewer outputs than some thread counts
  }
}

TEST_CASE("gemm_tn reads B as N x K and gives gemm's bits for its transpose") {
  std::mt19937 rng(17);
  for (const char* name : {"hopper-wgmma", "hopper", "mi210", "mi300x", "exact"}) {
    const TensorCoreModel* model = find_tensor_core_model(name);
    REQUIRE(model != nullptr);
    for (const Format* f : {&formats::bf16, &formats::e4m3, &formats::e5m2}) {
      const auto dot = model->for_input(*f);
      if (!dot) continue;
      CAPTURE(name);
      CAPTURE(f->name);
      GemmConfig g;
      g.model = *dot;
      g.input = *f;
      const std::size_t m = 3, n = 7, k = 40;
      const auto a = random_matrix(*f, m * k, true, rng), b_nk = random_matrix(*f, n * k, true, rng);
      std::vector<std::uint32_t> b_kn(k * n);
      for (std::size_t j = 0; j < n; ++j) {
        for (std::size_t p = 0; p < k; ++p) b_kn[p * n + j] = b_nk[j * k + p];
      }
      std::vector<float> c(m * n), want(m * n), got(m * n);
      std::normal_distribution<float> normal;
      for (float& x : c) x = normal(rng);
      gemm(g, m, n, k, a, b_kn, c, want);
      gemm_tn(g, m, n, k, a, b_nk, c, got);
      for (std::size_t e = 0; e < m * n; ++e) CHECK(same_bits(got[e], want[e]));
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

TEST_CASE("gemm decodes a matrix with more elements than its format has codes through a table") {
  // B holds 81920 elements: more than fp16's 65536 codes and e4m3's 256, so
  // gemm decodes it by lookup; about half its columns hold a NaN or an
  // infinity, which the table must flag for the reference path.
  std::mt19937 rng(27);
  for (const auto& [preset, format] : {std::pair{"hopper", &formats::fp16}, std::pair{"hopper", &formats::e4m3},
                                       std::pair{"hopper-wgmma", &formats::e5m2}, std::pair{"mi300x", &formats::bf16}}) {
    const std::string name = preset;
    const Format& f = *format;  // (clang 14 cannot capture bindings, as CAPTURE does)
    CAPTURE(name);
    CAPTURE(f.name);
    GemmConfig g;
    g.model = *find_tensor_core_model(name)->for_input(f);
    g.input = f;
    check_gemm(g, 2, 2048, 40, true, rng);
  }
}

TEST_CASE("FP8 mma.sync in the fast kernel: fp16 accumulators that overflow, NaN and infinity") {
  // Random e5m2 bits reach 57344: sums overflow fp16 to infinity inside one
  // fp16 block and in the addition of C, in either order of signs.
  std::mt19937 rng(90);
  for (const bool specials : {false, true}) {
    for (const Format* acc : {&formats::fp16, &formats::fp32}) {
      CAPTURE(specials);
      CAPTURE(acc->name);
      GemmConfig g;
      g.model = *find_tensor_core_model("hopper")->for_input(formats::e5m2);
      g.input = formats::e5m2;
      g.accumulator = *acc;
      check_gemm(g, 6, 6, 200, specials, rng);
    }
  }
}

TEST_CASE("CDNA3 in the fast kernel: bf16 and tf32 over a wide range of exponents") {
  // Random bits put an operand of 2^63 or more (the reference's share) in
  // almost every line of bf16 and tf32; these keep exponents in [-150, 50]
  // (subnormals, far-below C and products that cancel included).
  std::mt19937 rng(300);
  std::uniform_int_distribution<int> exponent(-150, 50);
  const auto wide = [&](const Format& f, std::size_t count) {
    std::vector<std::uint32_t> out(count);
    for (auto& v : out) {
      const double x = std::ldexp(1.0 + (rng() % 256) / 256.0, exponent(rng)) * (rng() % 2 ? -1 : 1);
      v = rng() % 4 == 0 ? 0 : static_cast<std::uint32_t>(convert(x, f).bits);
    }
    return out;
  };
  for (const Format* f : {&formats::bf16, &formats::tf32}) {
    CAPTURE(f->name);
    GemmConfig g;
    g.model = *find_tensor_core_model("mi300x")->for_input(*f);
    g.input = *f;
    const std::size_t m = 6, n = 5, k = 70;
    const auto a = wide(*f, m * k), b = wide(*f, k * n);
    std::vector<float> c(m * n), d(m * n);
    for (float& x : c) x = std::ldexp(static_cast<float>(rng() % 1000) - 500.0f, exponent(rng) / 2);
    gemm(g, m, n, k, a, b, c, d);
    for (std::size_t i = 0; i < m; ++i) {
      for (std::size_t j = 0; j < n; ++j) {
        CAPTURE(i);
        CAPTURE(j);
        CHECK(same_bits(d[i * n + j], reference_element(g, n, k, a, b, c[i * n + j], i, j)));
      }
    }
  }
}

TEST_CASE("CDNA3 in the fast kernel: an instruction that overflows to infinity stays infinite") {
  // bf16 operands 1.5 * 2^62 (the largest the fast path takes): eight
  // products of 2.25 * 2^124 sum to 2^128.17 and round to +inf; the next
  // instruction's 1 * 1 cannot bring it back.
  const std::uint32_t big = static_cast<std::uint32_t>(convert(1.5 * std::ldexp(1.0, 62), formats::bf16).bits);
  const std::uint32_t one = 0x3f80;
  std::vector<std::uint32_t> a(16, one), b(16, one);
  for (int q = 0; q < 8; ++q) a[q] = b[q] = big;
  GemmConfig g;
  g.model = *find_tensor_core_model("mi300x")->for_input(formats::bf16);
  g.input = formats::bf16;
  const std::vector<float> c(1, 0.0f);
  std::vector<float> d(1);
  gemm(g, 1, 1, 16, a, b, c, d);
  CHECK(std::bit_cast<std::uint32_t>(d[0]) == 0x7f800000u);
  CHECK(same_bits(d[0], reference_element(g, 1, 16, a, b, 0.0f, 0, 0)));
}

TEST_CASE("gemm rejects sizes that do not match") {
  GemmConfig g;
  g.model = *find_tensor_core_model("hopper-wgmma")->for_input(formats::e4m3);
  std::vector<std::uint32_t> a(6), b(6);
  std::vector<float> c(4), d(4);
  CHECK_THROWS_AS(gemm(g, 2, 2, 2, a, b, c, d), std::invalid_argument);
}

// The kernel's IEEE addition (gemm_kernel.hpp, FP8 mma.sync's last step on
// the CPU and the GPU) against independent sums: the CPU's own float
// addition for fp32 (SSE, nearest even), and for fp16 the exact sum in double
// rounded once; any NaN or inf - inf gives the canonical NaN.
TEST_CASE("the kernel's addition of two values is IEEE's, for fp32 and fp16") {
  std::mt19937 rng(29);
  std::size_t pairs = 0, differ = 0;
  for (int i = 0; i < 1 << 20; ++i) {
    const std::uint32_t x = rng();
    // Half the pairs near cancellation: -x with its last bits changed.
    const std::uint32_t y = (i & 1) ? static_cast<std::uint32_t>(rng()) : ((x ^ 0x80000000u) + (rng() % 64) - 32);
    const float fx = std::bit_cast<float>(x), fy = std::bit_cast<float>(y);
    const float sum = fx + fy;
    const std::uint32_t want = std::isnan(sum) ? 0x7FFFFFFFu : std::bit_cast<std::uint32_t>(sum);
    differ += detail::add_two_nearest(x, y, formats::fp32) != want;
    ++pairs;
  }
  for (std::uint32_t x = 0; x < 0x10000; ++x) {
    for (int r = 0; r < 256; ++r) {
      const std::uint32_t y = (r & 1) ? rng() & 0xFFFFu : ((x ^ 0x8000u) + (rng() % 16) - 8) & 0xFFFFu;
      const double sum = to_double(formats::fp16, x) + to_double(formats::fp16, y);  // exact
      const std::uint32_t want =
          std::isnan(sum) ? 0x7FFFu : static_cast<std::uint32_t>(convert(sum, formats::fp16, Policy{}).bits);
      differ += detail::add_two_nearest(x, y, formats::fp16) != want;
      ++pairs;
    }
  }
  CHECK(pairs == (1u << 20) + (1u << 24));
  CHECK(differ == 0);
}

// Exact alignment (mi100, ideal-fp32, exact) runs in the kernel's 640-bit
// sum, not the reference: bf16 and tf32 products span 2^-266 .. 2^256.
TEST_CASE("exact alignment runs in the kernel's wide sum, equal to dot_product_add") {
  std::mt19937 rng(640);
  for (const char* name : {"exact", "ideal-fp32", "mi100"}) {
    for (const char* input : {"fp16", "bf16", "tf32", "e4m3", "binary8p3se", "e2m1"}) {
      const TensorCoreModel& model = tensor_core_model(name);
      const Format f = *parse_format(input);
      const auto dot = model.for_input(f);
      if (!dot) continue;
      for (const Format* acc : {&formats::fp32, &formats::fp16}) {
        if (*acc == formats::fp16 && !dot->writes_fp16) continue;
        CAPTURE(name);
        CAPTURE(input);
        CAPTURE(acc->name);
        GemmConfig g;
        g.model = *dot;
        g.input = f;
        g.accumulator = *acc;
        g.promote_every = 32;
        g.split_k = 2;
        CHECK(detail::plan_gemm(g, 70).fast);
        check_gemm(g, 4, 5, 70, false, rng);
      }
    }
  }
}
