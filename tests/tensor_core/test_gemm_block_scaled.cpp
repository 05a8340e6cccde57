// The block-scaled GEMM (its kernel, block_scaled_kernel.hpp, shared with
// the GPU) is an optimisation of block_scaled_dot_product_add: bit for bit
// its chain along k, element by element, on random codes (NaN and
// infinities included), random scales with the extremes of E8M0 (UE4M3:
// zero, negative and NaN too), and every kind's element and scale formats.
#include <bit>
#include <doctest/doctest.h>
#include <random>
#include <stdexcept>
#include <vector>

#include "fmtcheck/tensor_core/block_scaled_kernel.hpp"
#include "fmtcheck/tensor_core/gemm.hpp"
#include "fmtcheck/tensor_core/tensor_core.hpp"

using namespace fmtcheck;

namespace {

// Random codes of f; a NaN or an infinity is kept one time in 16, so that a
// few outputs of each GEMM are special and most are not.
std::vector<std::uint32_t> random_codes(const Format& f, std::size_t count, std::mt19937& rng) {
  std::vector<std::uint32_t> out(count);
  for (auto& v : out) {
    do {
      v = static_cast<std::uint32_t>(f.to_storage(rng() & ((1u << f.width()) - 1)));
      const auto cls = classify(f, v);
      if ((cls != ValueClass::nan && cls != ValueClass::inf) || rng() % 16 == 0) break;
    } while (true);
  }
  return out;
}

// E8M0 scales near 2^0, and one in 16 an extreme: 2^-127, 2^-126, 2^126,
// 2^127 or NaN. UE4M3 scales: any code (negative ones and NaN included).
std::vector<std::uint8_t> random_scales(const Format& f, std::size_t count, std::mt19937& rng) {
  static constexpr std::uint8_t extremes[] = {0x00, 0x01, 0xfd, 0xfe, 0xff};
  std::vector<std::uint8_t> out(count);
  for (auto& s : out) {
    if (f == formats::e4m3) {
      s = static_cast<std::uint8_t>(rng());
    } else {
      s = rng() % 16 == 0 ? extremes[rng() % 5] : static_cast<std::uint8_t>(127 - 20 + rng() % 41);
    }
  }
  return out;
}

// block_scaled_dot_product_add chained along k for row i of A and row j of B.
std::uint32_t reference_element(const BlockScaledGemmConfig& g, std::size_t k, const std::vector<std::uint32_t>& a,
                                 const std::vector<std::uint32_t>& b, const std::vector<std::uint8_t>& sa,
                                 const std::vector<std::uint8_t>& sb, std::size_t i, std::size_t j) {
  const std::size_t per = g.instruction_k / g.scale_block, scales = k / g.scale_block;
  std::uint64_t c = 0;
  for (std::size_t q = 0; q < k / g.instruction_k; ++q) {
    const auto ak = a.begin() + static_cast<std::ptrdiff_t>(i * k + q * g.instruction_k);
    const auto bk = b.begin() + static_cast<std::ptrdiff_t>(j * k + q * g.instruction_k);
    const auto sak = sa.begin() + static_cast<std::ptrdiff_t>(i * scales + q * per);
    const auto sbk = sb.begin() + static_cast<std::ptrdiff_t>(j * scales + q * per);
    const std::vector<std::uint64_t> av(ak, ak + static_cast<std::ptrdiff_t>(g.instruction_k));
    const std::vector<std::uint64_t> bv(bk, bk + static_cast<std::ptrdiff_t>(g.instruction_k));
    const std::vector<std::uint64_t> sav(sak, sak + static_cast<std::ptrdiff_t>(per));
    const std::vector<std::uint64_t> sbv(sbk, sbk + static_cast<std::ptrdiff_t>(per));
    c = block_scaled_dot_product_add(g.model, g.input, av, bv, g.scale_format, sav, sbv, c).bits;
  }
  return static_cast<std::uint32_t>(c);
}

// The GEMM against the reference on random M×K and N×K operands, the last
// row of A with a NaN first scale whatever the draw.
void check_against_reference(const BlockScaledGemmConfig& g, std::size_t m, std::size_t n, std::size_t k,
                                    unsigned seed, bool kernel = true) {
  // The shared kernel (block_scaled_kernel.hpp) computes the clean rows, or none.
  CHECK(detail::kernel_takes(g) == kernel);
  std::mt19937 rng(seed);
  const auto a = random_codes(g.input, m * k, rng), b = random_codes(g.input, n * k, rng);
  auto sa = random_scales(g.scale_format, m * k / g.scale_block, rng);
  sa[(m - 1) * k / g.scale_block] = g.scale_format == formats::e4m3 ? 0x7f : 0xff;
  const auto sb = random_scales(g.scale_format, n * k / g.scale_block, rng);
  std::vector<float> d(m * n);
  gemm_block_scaled(g, m, n, k, a, b, sa, sb, d);
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      const auto got = std::bit_cast<std::uint32_t>(d[i * n + j]);
      INFO(g.input.name, " x ", g.scale_format.name, " scales, K = ", g.instruction_k, ": D[", i, "][", j, "]");
      REQUIRE(got == reference_element(g, k, a, b, sa, sb, i, j));
    }
  }
}

BlockScaledGemmConfig config(const BlockScaledModel& model, const Format& input, const Format& scale_format,
                             std::size_t scale_block, std::size_t instruction_k) {
  BlockScaledGemmConfig g;
  g.model = model;
  g.input = input;
  g.scale_format = scale_format;
  g.scale_block = scale_block;
  g.instruction_k = instruction_k;
  g.threads = 1;
  return g;
}

}  // namespace

TEST_CASE("gemm_block_scaled: kind::mxf8f6f4 equals block_scaled_dot_product_add, bit for bit") {
  for (const Format* f : {&formats::e4m3, &formats::e5m2, &formats::e3m2, &formats::e2m3, &formats::e2m1}) {
    check_against_reference(config(blackwell_mxf8f6f4, *f, formats::e8m0, 32, 32), 9, 7, 160, 1);
  }
}

TEST_CASE("gemm_block_scaled: kind::mxf4 (UE8M0 per 32) and mxf4nvf4 (UE4M3 per 16), K = 64") {
  check_against_reference(config(blackwell_mxf4, formats::e2m1, formats::e8m0, 32, 64), 8, 6, 192, 2);
  check_against_reference(config(blackwell_mxf4, formats::e2m1, formats::e4m3, 16, 64), 8, 6, 192, 3);
  check_against_reference(config(blackwell_mxf4, formats::e4m3, formats::e8m0, 32, 32), 8, 6, 128, 4);
}

TEST_CASE("gemm_block_scaled: a model the kernels do not take runs the reference for every output") {
  const BlockScaledModel wide{40, 0};  // F = 40: sums beyond the kernel's 64 bits
  check_against_reference(config(wide, formats::e4m3, formats::e8m0, 32, 32), 5, 4, 96, 7, false);
}

TEST_CASE("gemm_block_scaled: threads give the same bits") {
  BlockScaledGemmConfig g = config(blackwell_mxf8f6f4, formats::e4m3, formats::e8m0, 32, 32);
  g.threads = 3;
  check_against_reference(g, 10, 4, 64, 5);
  check_against_reference(g, 1, 5, 64, 6);  // one row, split between the threads
}

TEST_CASE("gemm_block_scaled: sizes and kinds it refuses") {
  const BlockScaledGemmConfig g = config(blackwell_mxf8f6f4, formats::e4m3, formats::e8m0, 32, 32);
  const std::vector<std::uint32_t> x(2 * 48);
  const std::vector<std::uint8_t> s(2 * 2);
  std::vector<float> d(4);
  CHECK_THROWS_AS(gemm_block_scaled(g, 2, 2, 48, x, x, s, s, d), std::invalid_argument);  // K not a multiple of 32
  const std::vector<std::uint32_t> y(2 * 64);
  CHECK_THROWS_AS(gemm_block_scaled(g, 2, 2, 64, y, y, std::span(s).first(3), s, d), std::invalid_argument);
  const BlockScaledGemmConfig wide = config(blackwell_mxf4, formats::e5m2, formats::e8m0, 32, 32);
  CHECK_THROWS_AS(gemm_block_scaled(wide, 2, 2, 64, y, y, s, s, d), std::invalid_argument);  // group sums overflow
}
