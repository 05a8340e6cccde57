// The training emulator's FP8 backward GEMM (E5M2 gradients times E4M3
// weights or activations) against the reference dot product reading each
// operand in its own format, output by output, on every preset with both
// FP8 types, subnormals included; and a hand-worked block where reading
// them as fp16 (each value exact) would align a subnormal lower and keep a
// bit the hardware's alignment cuts.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "fmtcheck/core/convert.hpp"
#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/random.hpp"
#include "fmtcheck/tensor_core/tensor_core.hpp"
#include "fmtcheck/train/tensor_ops.hpp"

using namespace fmtcheck;

namespace {

// Finite codes of f over its whole range, many of them subnormal: one in
// four has a zero exponent field, and NaN and infinity codes are skipped.
std::vector<std::uint32_t> codes(const Format& f, std::size_t count, std::uint64_t seed) {
  std::vector<std::uint32_t> out;
  for (std::uint64_t i = 0; out.size() < count; ++i) {
    const std::uint64_t r = splitmix64(seed, i);
    auto code = static_cast<std::uint32_t>(r & 0xFF);
    if ((r >> 8) % 4 == 0) code &= ~(((1u << f.exponent_bits) - 1) << f.mantissa_bits);  // subnormal or zero
    const auto cls = classify(f, code);
    if (cls == ValueClass::nan || cls == ValueClass::inf) continue;
    out.push_back(code);
  }
  return out;
}

}  // namespace

TEST_CASE("EmulatedOps reads E5M2 x E4M3 each in its own format, as the reference dot product does") {
  const std::size_t m = 6, n = 7, k = 96;
  for (const char* name : {"hopper-wgmma", "hopper", "ada", "blackwell", "blackwell-tcgen05"}) {
    const std::string preset = name;
    CAPTURE(preset);
    const TensorCoreModel& model = tensor_core_model(name);
    const auto dot = model.for_inputs(formats::e5m2, formats::e4m3);
    REQUIRE(dot.has_value());
    const std::vector<std::uint32_t> a = codes(formats::e5m2, m * k, 1), b = codes(formats::e4m3, n * k, 2);
    train::EmulatedOps ops(model);
    const std::vector<float> d =
        ops.gemm({&formats::e5m2, a, 1.0f, {}}, {&formats::e4m3, b, 1.0f, {}}, m, n, k);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < m; ++i) {
      for (std::size_t j = 0; j < n; ++j) {
        const std::vector<std::uint64_t> row(a.begin() + i * k, a.begin() + (i + 1) * k);
        const std::vector<std::uint64_t> col(b.begin() + j * k, b.begin() + (j + 1) * k);
        const auto want = static_cast<std::uint32_t>(
            dot_product_add(*dot, formats::e5m2, formats::e4m3, row, col, 0, formats::fp32).bits);
        if (std::bit_cast<std::uint32_t>(d[i * n + j]) != want && ++wrong <= 3) {
          FAIL_CHECK("D[" << i << "][" << j << "] bits " << std::bit_cast<std::uint32_t>(d[i * n + j])
                          << ", reference " << want);
        }
      }
    }
    CHECK(wrong == 0);
  }
}

TEST_CASE("EmulatedOps: an E4M3 subnormal that sets a block's largest exponent aligns at E4M3's lowest binade") {
  // Under hopper-wgmma (F = 13, 13 fraction bits kept): 1 x 2^-9 (E4M3's
  // smallest subnormal, aligned at 2^-6) sets e_max = -6 and truncates the
  // other product, 1.25*2^-10 x 1.125*2^-6 = 1011010b * 2^-22, at 2^-19;
  // read as fp16 the subnormal is a normal 2^-9, e_max = -9, and its bit at
  // 2^-21 stays.
  std::vector<std::uint32_t> a(32, 0), b(32, 0);
  a[0] = 0x3C;  // e5m2 1.0
  a[1] = 0x15;  // e5m2 1.25 * 2^-10
  b[0] = 0x01;  // e4m3 2^-9, subnormal
  b[1] = 0x09;  // e4m3 1.125 * 2^-6
  train::EmulatedOps ops(tensor_core_model("hopper-wgmma"));
  const float d = ops.gemm({&formats::e5m2, a, 1.0f, {}}, {&formats::e4m3, b, 1.0f, {}}, 1, 1, 32)[0];
  const float kept = std::ldexp(1.0f, -9) + std::ldexp(1.0f, -16) + std::ldexp(1.0f, -18) + std::ldexp(1.0f, -19);
  CHECK(d == kept);
  const std::vector<std::uint64_t> row16 = {0x3C00, 0x1500}, col16 = {0x1800, 0x2480};  // the same values as fp16
  const auto as_fp16 = std::bit_cast<float>(static_cast<std::uint32_t>(
      dot_product_add(*tensor_core_model("hopper-wgmma").for_input(formats::e4m3), formats::fp16, formats::fp16,
                      row16, col16, 0, formats::fp32)
          .bits));
  CHECK(as_fp16 == kept + std::ldexp(1.0f, -21));
}
