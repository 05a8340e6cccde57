// The GPU's TensorOps for the training step: cvt.rn to fp16/bf16 and the
// mma.sync tile GEMM (mma_kernels.cu).
#include "device_buffer.hpp"
#include "fmtcheck/cuda/convert.hpp"
#include "fmtcheck/cuda/device.hpp"
#include "fmtcheck/cuda/launch.hpp"
#include "fmtcheck/cuda/train.hpp"
#include "kernel_ops.hpp"

#include <bit>

namespace fmtcheck::cuda {

std::vector<std::uint32_t> DeviceOps::to_half(const Format& half, std::span<const float> x) {
  return convert_on_device(*find_device_conversion(half, Rounding::rne), x);
}

std::vector<float> DeviceOps::gemm(const Format& half, std::size_t m, std::size_t n, std::size_t k,
                                   std::span<const std::uint32_t> a, std::span<const std::uint32_t> b) {
  check_tile_gemm(half, m, n, k, a, b);
  require_device();
  std::vector<std::uint32_t> b_columns(k * n);  // the kernel reads B column by column
  for (std::size_t j = 0; j < k; ++j) {
    for (std::size_t c = 0; c < n; ++c) b_columns[c * k + j] = b[j * n + c];
  }
  detail::DeviceBuffer<std::uint32_t> da{a}, db{std::span<const std::uint32_t>(b_columns)}, dd(m * n);
  const auto op = half == formats::fp16 ? detail::MmaOp::f16_f32 : detail::MmaOp::bf16_f32;
  detail::launch_tile_gemm(op, da.get(), db.get(), dd.get(), static_cast<int>(m), static_cast<int>(n),
                           static_cast<int>(k), mma_launch(m / 16 * (n / 8)));
  const std::vector<std::uint32_t> bits = dd.to_host();
  std::vector<float> d(bits.size());
  for (std::size_t i = 0; i < bits.size(); ++i) d[i] = std::bit_cast<float>(bits[i]);
  return d;
}

}  // namespace fmtcheck::cuda
