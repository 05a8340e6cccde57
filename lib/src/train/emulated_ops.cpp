#include <bit>
#include <cmath>
#include <stdexcept>

#include "fmtcheck/batch/convert_parallel.hpp"
#include "fmtcheck/core/convert.hpp"
#include "fmtcheck/core/decode.hpp"
#include "fmtcheck/tensor_core/gemm.hpp"
#include "fmtcheck/train/exact_math.hpp"
#include "fmtcheck/train/tensor_ops.hpp"

namespace fmtcheck::train {
namespace {

std::vector<std::uint32_t> reencode(std::span<const std::uint32_t> bits, const Format& from, const Format& to) {
  std::vector<std::uint32_t> out(bits.size());
  for (std::size_t i = 0; i < bits.size(); ++i) out[i] = static_cast<std::uint32_t>(convert_bits(bits[i], from, to).bits);
  return out;
}

// Element values times their block's power of two, as tf32 (float32) bits:
// an FP8 significand scaled by 2^-127 .. 2^127 is exact there.
std::vector<std::uint32_t> dequantize_mx(const Operand& x) {
  std::vector<std::uint32_t> out(x.bits.size());
  for (std::size_t i = 0; i < x.bits.size(); ++i) {
    const double v = std::ldexp(to_double(*x.format, x.bits[i]), static_cast<int>(x.block_scales[i / mx_block]) - 127);
    out[i] = std::bit_cast<std::uint32_t>(static_cast<float>(v));
  }
  return out;
}

}  // namespace

void EmulatedOps::run_gemm(const GemmConfig& config, std::size_t m, std::size_t n, std::size_t k,
                           std::span<const std::uint32_t> a, std::span<const std::uint32_t> b,
                           std::span<const float> c, std::span<float> d) const {
  if (runner_) return runner_(config, m, n, k, a, b, c, d);
  fmtcheck::gemm_tn(config, m, n, k, a, b, c, d);
}

std::vector<std::uint32_t> EmulatedOps::cast(const Format& to, const Policy& policy, std::span<const float> x,
                                             FlagCounts& counts) {
  // convert_parallel (convert_batch's bits, on every core for a large
  // tensor) writes elements of the format's own width.
  auto widen = [&](auto element) {
    std::vector<decltype(element)> narrow(x.size());
    counts += convert_parallel(BatchSource{x}, to, policy, std::span<decltype(element)>(narrow));
    return std::vector<std::uint32_t>(narrow.begin(), narrow.end());
  };
  switch (to.storage_bits) {
    case 8: return widen(std::uint8_t{});
    case 16: return widen(std::uint16_t{});
    case 32: return widen(std::uint32_t{});
    default: throw std::invalid_argument("cast: " + to.name + " does not fit 32 bits");
  }
}

std::vector<float> EmulatedOps::gemm_block_scaled(const Operand& a, const Operand& b, std::size_t m, std::size_t n,
                                                  std::size_t k) {
  if (k % mx_block != 0 || a.block_scales.size() != m * k / mx_block || b.block_scales.size() != n * k / mx_block ||
      *a.format != *b.format) {
    throw std::invalid_argument("gemm: MX operands need k a multiple of 32, one scale per block and one element format");
  }
  std::vector<float> d(m * n);
  if (model_.name == "exact") {
    GemmConfig config;
    config.model = *model_.for_input(formats::tf32);
    config.input = formats::tf32;
    const std::vector<float> zero(m * n, 0.0f);
    run_gemm(config, m, n, k, dequantize_mx(a), dequantize_mx(b), zero, d);
    return d;
  }
  if (model_.name != "blackwell") throw std::invalid_argument("tensor-core model '" + model_.name + "' has no MX instruction");
  BlockScaledGemmConfig config;
  config.model = blackwell_mxf8f6f4;
  config.input = *a.format;
  config.scale_format = formats::e8m0;
  config.scale_block = config.instruction_k = mx_block;  // kind::mxf8f6f4: one scale pair per instruction
  if (block_scaled_runner_) {
    block_scaled_runner_(config, m, n, k, a.bits, b.bits, a.block_scales, b.block_scales, d);
  } else {
    fmtcheck::gemm_block_scaled(config, m, n, k, a.bits, b.bits, a.block_scales, b.block_scales, d);
  }
  return d;
}

std::vector<float> EmulatedOps::gemm(const Operand& a, const Operand& b, std::size_t m, std::size_t n, std::size_t k) {
  if (a.bits.size() != m * k || b.bits.size() != n * k) throw std::invalid_argument("gemm: operand sizes do not match");
  if (!a.block_scales.empty() || !b.block_scales.empty()) return gemm_block_scaled(a, b, m, n, k);
  const auto dot = model_.for_input(*a.format);
  if (!dot || !model_.for_input(*b.format)) {
    throw std::invalid_argument("tensor-core model '" + model_.name + "' has no " + a.format->name + " x " +
                                b.format->name + " instruction");
  }
  GemmConfig config;
  config.model = *dot;
  config.scale_a = a.scale_inv;
  config.scale_b = b.scale_inv;
  const std::vector<float> zero(m * n, 0.0f);
  std::vector<float> d(m * n);
  if (*a.format == *b.format) {
    config.input = *a.format;
    run_gemm(config, m, n, k, a.bits, b.bits, zero, d);
  } else {
    if (a.format->storage_bits > 8 || b.format->storage_bits > 8) {
      throw std::invalid_argument("gemm: mixed operand formats must both be 8-bit formats");
    }
    // OCP FP8 (E4M3 x E5M2: a gradient times a weight or an activation)
    // is read as the hardware reads it, each operand in its own format (a
    // subnormal aligned at its own format's lowest binade), on the
    // arithmetic both share (gemm's input_b). The other 8-bit formats
    // (P3109, MX elements), which only the exact models take, meet in
    // fp32, which holds both exactly; exact alignment keeps every bit, so
    // the encoding changes nothing there.
    const auto ocp_fp8 = [](const Format& f) { return f.name.starts_with("e4m3") || f.name.starts_with("e5m2"); };
    const auto both = model_.for_inputs(*a.format, *b.format);
    if (ocp_fp8(*a.format) && ocp_fp8(*b.format) && both) {
      config.model = *both;
      config.input = *a.format;
      config.input_b = *b.format;
      run_gemm(config, m, n, k, a.bits, b.bits, zero, d);
    } else {
      config.input = formats::fp32;
      run_gemm(config, m, n, k, reencode(a.bits, *a.format, config.input), reencode(b.bits, *b.format, config.input),
               zero, d);
    }
  }
  return d;
}

}  // namespace fmtcheck::train
