// The GPU's TensorOps for the training step: cvt.rn to fp16/bf16, fp32
// registers as they are for tf32, and the mma.sync tile GEMM
// (mma_kernels.cu).
#include <bit>
#include <cmath>
#include <stdexcept>

#include "device_buffer.hpp"
#include "fmtcheck/core/decode.hpp"
#include "fmtcheck/cuda/convert.hpp"
#include "fmtcheck/cuda/device.hpp"
#include "fmtcheck/cuda/launch.hpp"
#include "fmtcheck/cuda/train.hpp"
#include "fmtcheck/train/recipe.hpp"
#include "kernel_ops.hpp"

namespace fmtcheck::cuda {
namespace {

bool half_format(const Format& f) { return f == formats::fp16 || f == formats::bf16; }
bool tile_format(const Format& f) { return half_format(f) || f == formats::tf32; }

// What the tf32 recipe asks for: truncation, which is how tensor cores read
// fp32 registers.
bool tensor_core_truncation(const Policy& p) { return p == train::find_recipe("tf32")->operand_policy; }

std::size_t round_up(std::size_t v, std::size_t to) { return (v + to - 1) / to * to; }

// rows×cols bits zero-padded to to_rows×to_cols.
std::vector<std::uint32_t> pad(std::span<const std::uint32_t> x, std::size_t rows, std::size_t cols,
                               std::size_t to_rows, std::size_t to_cols) {
  std::vector<std::uint32_t> p(to_rows * to_cols, 0);
  for (std::size_t r = 0; r < rows; ++r) {
    std::copy_n(x.begin() + static_cast<std::ptrdiff_t>(r * cols), cols,
                p.begin() + static_cast<std::ptrdiff_t>(r * to_cols));
  }
  return p;
}

}  // namespace

void check_tile_gemm(const train::Operand& a, const train::Operand& b, std::size_t m, std::size_t n, std::size_t k) {
  if (a.format == nullptr || b.format == nullptr || *a.format != *b.format || !tile_format(*a.format)) {
    throw std::invalid_argument("tile GEMM: fp16, bf16 or tf32 operands of one format only");
  }
  if (a.scale_inv != 1.0f || b.scale_inv != 1.0f || !a.block_scales.empty() || !b.block_scales.empty()) {
    throw std::invalid_argument("tile GEMM: no scaled operands");
  }
  if (m == 0 || n == 0 || k == 0 || a.bits.size() != m * k || b.bits.size() != n * k) {
    throw std::invalid_argument("tile GEMM: A and B must hold m×k and n×k values");
  }
}

std::vector<std::uint32_t> DeviceOps::cast(const Format& to, const Policy& policy, std::span<const float> x,
                                           FlagCounts& counts) {
  if (to == formats::tf32 && tensor_core_truncation(policy)) {
    // No conversion: the mma reads the fp32 bits and ignores the low 13.
    // The counts are the truncation's (nonzero values below tf32's smallest
    // subnormal become zero), computed here.
    std::vector<std::uint32_t> bits(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      bits[i] = std::bit_cast<std::uint32_t>(x[i]);
      Flags f;
      if (x[i] != 0.0f && std::isfinite(x[i]) && (bits[i] & 0x7FFFE000u) == 0) f |= Flag::tiny_to_zero;
      counts.add(f);
    }
    return bits;
  }
  const DeviceConversion* conversion = half_format(to) ? find_device_conversion(to, Rounding::rne) : nullptr;
  if (conversion == nullptr || conversion->policy() != policy) {
    throw std::invalid_argument("the GPU casts to fp16 and bf16 with cvt.rn only, not to " + to.name + " under " +
                                describe(policy));
  }
  std::vector<std::uint32_t> bits = convert_on_device(*conversion, x);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double v = to_double(to, bits[i]);
    Flags f;
    if (x[i] != 0.0f && std::isfinite(x[i]) && v == 0.0) f |= Flag::tiny_to_zero;
    if (std::isfinite(x[i]) && std::isinf(v)) f |= Flag::overflow;
    counts.add(f);
  }
  return bits;
}

std::vector<float> DeviceOps::gemm(const train::Operand& a, const train::Operand& b, std::size_t m, std::size_t n,
                                   std::size_t k) {
  check_tile_gemm(a, b, m, n, k);
  require_device();
  const std::size_t pm = round_up(m, 16), pn = round_up(n, 8), pk = round_up(k, 16);
  // The kernel reads B column by column: B's n×k rows, as the operand holds them.
  detail::DeviceBuffer<std::uint32_t> da{pad(a.bits, m, k, pm, pk)}, db{pad(b.bits, n, k, pn, pk)}, dd(pm * pn);
  const auto op = *a.format == formats::fp16   ? detail::MmaOp::f16_f32
                  : *a.format == formats::bf16 ? detail::MmaOp::bf16_f32
                                               : detail::MmaOp::tf32_f32;
  detail::launch_tile_gemm(op, da.get(), db.get(), dd.get(), static_cast<int>(pm), static_cast<int>(pn),
                           static_cast<int>(pk), mma_launch(pm / 16 * (pn / 8)));
  const std::vector<std::uint32_t> bits = dd.to_host();
  std::vector<float> d(m * n);
  for (std::size_t r = 0; r < m; ++r) {
    for (std::size_t c = 0; c < n; ++c) d[r * n + c] = std::bit_cast<float>(bits[r * pn + c]);
  }
  return d;
}

}  // namespace fmtcheck::cuda
