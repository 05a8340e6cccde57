// Eigen, fmt and the dot/matmul accumulations against independent
// references: the CPU's fused multiply-add for fp32 accumulation (float fma
// is correctly rounded and bf16 operands are exact floats), and the Boost
// reference for exact and element-format accumulation.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>

#include "fmtcheck/arith/eigen.hpp"
#include "fmtcheck/arith/fmt.hpp"
#include "fmtcheck/core/convert.hpp"
#include "reference_ops.hpp"

using namespace fmtcheck;
using Matrix = Eigen::Matrix<bfloat16, Eigen::Dynamic, Eigen::Dynamic>;

namespace {

Matrix random_matrix(Eigen::Index rows, Eigen::Index cols, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Matrix m(rows, cols);
  for (Eigen::Index i = 0; i < rows; ++i)
    for (Eigen::Index j = 0; j < cols; ++j) m(i, j) = bfloat16(normal(rng));
  return m;
}

}  // namespace

TEST_CASE("Eigen: a bf16 product whose sums are exact equals the integer product") {
  // Small integers: every product and partial sum is exact in bf16 (< 2^8),
  // so Eigen's summation order cannot matter.
  Eigen::MatrixXi ai(5, 7), bi(7, 4);
  std::mt19937 rng(1);
  std::uniform_int_distribution<int> digit(-3, 3);
  for (int i = 0; i < ai.size(); ++i) ai.data()[i] = digit(rng);
  for (int i = 0; i < bi.size(); ++i) bi.data()[i] = digit(rng);
  const Matrix a = ai.unaryExpr([](int v) { return bfloat16(v); });
  const Matrix b = bi.unaryExpr([](int v) { return bfloat16(v); });
  const Matrix c = a * b;
  const Eigen::MatrixXi ci = ai * bi;
  for (int i = 0; i < ci.size(); ++i) CHECK(static_cast<double>(c.data()[i]) == ci.data()[i]);
  CHECK(static_cast<double>(a.sum()) == ai.sum());
}

TEST_CASE("matmul with fp32 accumulation equals the CPU's float fma loop") {
  std::mt19937 rng(2);
  const Matrix a = random_matrix(8, 64, rng), b = random_matrix(64, 8, rng);
  FlagCounts flags;
  const auto c = matmul<float32>(a, b, Accumulation::fp32, &flags);
  for (Eigen::Index i = 0; i < a.rows(); ++i) {
    for (Eigen::Index j = 0; j < b.cols(); ++j) {
      float s = 0.0f;
      for (Eigen::Index x = 0; x < a.cols(); ++x) s = std::fma(static_cast<float>(a(i, x)), static_cast<float>(b(x, j)), s);
      CHECK(static_cast<float>(c(i, j)) == s);
    }
  }
  CHECK(flags.values == 64);
  CHECK(flags[Flag::inexact] > 0);  // random normal products do not add up exactly
  CHECK(flags[Flag::overflow] == 0);
}

TEST_CASE("matmul with exact and with bf16 accumulation equals the Boost reference") {
  std::mt19937 rng(3);
  const Matrix a = random_matrix(4, 32, rng), b = random_matrix(32, 4, rng);
  reference::Table table(formats::bf16);
  reference::Arithmetic ref(table);
  const auto exact = matmul<bfloat16>(a, b, Accumulation::exact);
  const auto element = matmul<bfloat16>(a, b, Accumulation::element);
  for (Eigen::Index i = 0; i < a.rows(); ++i) {
    for (Eigen::Index j = 0; j < b.cols(); ++j) {
      reference::Int sum = 0;
      std::uint64_t running = 0;  // +0
      for (Eigen::Index x = 0; x < a.cols(); ++x) {
        const auto& va = table.value(a(i, x).bits());
        const auto& vb = table.value(b(x, j).bits());
        const reference::Int product = va.magnitude * vb.magnitude;
        sum += (va.sign != vb.sign) ? reference::Int(-product) : product;
        running = ref.add(running, ref.mul(a(i, x).bits(), b(x, j).bits()).bits).bits;
      }
      CHECK(exact(i, j).bits() == table.round(table.on_grid(sum, 2 * table.q())).bits);
      CHECK(element(i, j).bits() == running);
    }
  }
}

TEST_CASE("a DotKernel is the extension point: any callable plugs into matmul") {
  // A toy kernel (always +1) shows the wiring a tensor-core model uses.
  const DotKernel one = [](const Format&, std::span<const std::uint64_t>, std::span<const std::uint64_t>,
                           const Format& out, const Policy& p) { return convert(1.0, out, p); };
  std::mt19937 rng(4);
  const auto c = matmul<float16>(random_matrix(2, 3, rng), random_matrix(3, 2, rng), one);
  for (Eigen::Index i = 0; i < c.size(); ++i) CHECK(c.data()[i].bits() == 0x3C00);
}

TEST_CASE("fmt prints the value by default and the bits on request") {
  CHECK(fmt::format("{}", bfloat16(1.5f)) == "1.5");
  CHECK(fmt::format("{}", bfloat16(0.1f)) == "0.10009765625");  // the exact value is a short double
  CHECK(fmt::format("{:.3f}", float16(3.14159)) == "3.141");
  CHECK(fmt::format("{:x}", bfloat16(1.5f)) == "0x3fc0");
  CHECK(fmt::format("{:X}", float16(-2.0)) == "0xC000");
  CHECK(fmt::format("{:b}", float8_e4m3(1.0f)) == "0b00111000");
  CHECK(fmt::format("{:x}", tf32(1.0f)) == "0x3f800000");
  CHECK(fmt::format("{}", -std::numeric_limits<float16>::infinity()) == "-inf");
}

TEST_CASE("exact accumulation: infinities and NaNs follow IEEE for any input format, fp64 included") {
  // Hand-worked from IEEE 754 §6.1-§7.2 applied to the exact sum of exact products.
  const auto f64 = [](double x) { return std::bit_cast<std::uint64_t>(x); };
  const auto run = [&](std::vector<double> a, std::vector<double> b, const Format& out, const Policy& p = {}) {
    std::vector<std::uint64_t> x, y;
    for (double v : a) x.push_back(f64(v));
    for (double v : b) y.push_back(f64(v));
    return dot(formats::fp64, x, y, out, Accumulation::exact, p);
  };
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Finite products that overflow fp64 cancel exactly: the exact sum is 0,
  // where an fp64 chain would compute inf - inf = NaN.
  Conversion c = run({1e300, 1e300}, {1e300, -1e300}, formats::fp64);
  CHECK(c.bits == 0);
  CHECK(c.flags == Flags());
  c = run({1e300, 1e300, 1.0}, {1e300, -1e300, 0.5}, formats::fp64);
  CHECK(c.bits == f64(0.5));
  CHECK(c.flags == Flags());
  // A finite sum beyond fp64's range overflows only when rounded at the end.
  c = run({1e300}, {1e300}, formats::fp64);
  CHECK(c.bits == f64(inf));
  CHECK(c.flags == (Flags(Flag::overflow) | Flag::inexact));
  c = run({1e300, -1e300}, {1e300, 1e300}, formats::fp64, {.rounding = Rounding::rtz});
  CHECK(c.bits == 0);
  // Infinite products: the sum is that infinity; both signs, or 0 * inf, are invalid.
  c = run({inf, 1e300}, {2.0, -1e300}, formats::fp64);
  CHECK(c.bits == f64(inf));
  CHECK(c.flags == Flags());
  c = run({inf, -inf}, {1.0, 1.0}, formats::fp64);
  CHECK(std::isnan(std::bit_cast<double>(c.bits)));
  CHECK(c.flags == (Flags(Flag::invalid) | Flag::nan_produced));
  c = run({0.0, 1.0}, {inf, 1.0}, formats::fp64);
  CHECK(std::isnan(std::bit_cast<double>(c.bits)));
  CHECK(c.flags.has(Flag::invalid));
  // An infinity under saturation is max finite, as for every other operation.
  c = run({-inf}, {1.0}, formats::fp16, {.overflow = Overflow::sat});
  CHECK(c.bits == 0xFBFF);
  // daz takes a subnormal operand as zero before the products: 0 * inf is invalid.
  c = run({4.9e-324, 1.0}, {inf, 1.0}, formats::fp64, {.subnormals = Subnormals::daz});
  CHECK(std::isnan(std::bit_cast<double>(c.bits)));
  CHECK(c.flags.has(Flag::invalid));
  CHECK(c.flags.has(Flag::flushed));
  // The first NaN operand, in the order a[0], b[0], a[1], ..., gives the result's sign and payload.
  const double negative_nan = -nan;
  c = run({1.0, negative_nan}, {nan, 1.0}, formats::fp64);
  CHECK(c.bits == f64(nan));
  c = run({1.0, negative_nan}, {2.0, nan}, formats::fp64);
  CHECK(c.bits == f64(negative_nan));
  CHECK(c.flags == Flags());
}
