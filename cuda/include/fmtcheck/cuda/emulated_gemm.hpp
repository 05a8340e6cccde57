// fmtcheck's emulated GEMM on the GPU: gemm() (fmtcheck/tensor_core/gemm.hpp)
// for every tensor-core preset, with the CPU's kernel (gemm_kernel.hpp)
// compiled for the device, so the same inputs give the same output bits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "fmtcheck/tensor_core/gemm.hpp"

namespace fmtcheck::cuda {

// What the GPU left to the CPU: outputs whose row of A or column of B holds
// a NaN or an infinity (or, on CDNA3, a value of 2^63 or more), and every
// output of a configuration the kernel does not take (exact alignment of
// formats whose sums outgrow its 640-bit integer: none of 32 bits or less),
// computed by the CPU's gemm() from host copies.
struct GpuGemmReport {
  std::size_t outputs = 0;       // M x N
  std::size_t cpu_outputs = 0;   // of those, computed on the CPU
};

// An operand in device memory: container bits of 1, 2 or 4 bytes each
// (FP8 codes as torch's float8 tensors hold them, fp16/bf16 in 2, tf32 in
// float32's 4).
struct DeviceCodes {
  const void* data = nullptr;
  int bytes = 4;
};

// D = A·B + C as gemm(config, m, n, k, ...) computes it, on the current
// device: a (M x K), b (K x N), c and d (M x N) are device addresses,
// row-major, A and B container bits of config.input (config.input_b). d may
// be c. Throws std::invalid_argument for what gemm() refuses or a container
// width other than 1, 2 or 4 bytes, std::runtime_error on CUDA errors (no
// GPU among them).
GpuGemmReport gemm_device_buffers(const GemmConfig& config, std::size_t m, std::size_t n, std::size_t k,
                                  DeviceCodes a, DeviceCodes b, const float* c, float* d);

// The same for host matrices, through device buffers.
GpuGemmReport gemm_on_gpu(const GemmConfig& config, std::size_t m, std::size_t n, std::size_t k,
                          std::span<const std::uint32_t> a, std::span<const std::uint32_t> b,
                          std::span<const float> c, std::span<float> d);

// gemm_block_scaled (gemm.hpp) on the GPU, with the CPU's kernel
// (block_scaled_kernel.hpp): a and b (M x K, N x K, k-contiguous) device
// codes of config.input, scale_a and scale_b (M x K/S, N x K/S) device
// scale codes, d (M x N) device float32. Where some element or scale is a
// NaN or an infinity, or the kernel does not take the configuration, the
// CPU's gemm_block_scaled computes all of D from host copies. Throws as
// gemm_block_scaled does.
GpuGemmReport gemm_block_scaled_device_buffers(const BlockScaledGemmConfig& config, std::size_t m, std::size_t n,
                                               std::size_t k, DeviceCodes a, DeviceCodes b,
                                               const std::uint8_t* scale_a, const std::uint8_t* scale_b, float* d);

// The same for host matrices, through device buffers.
GpuGemmReport gemm_block_scaled_on_gpu(const BlockScaledGemmConfig& config, std::size_t m, std::size_t n,
                                       std::size_t k, std::span<const std::uint32_t> a,
                                       std::span<const std::uint32_t> b, std::span<const std::uint8_t> scale_a,
                                       std::span<const std::uint8_t> scale_b, std::span<float> d);

}  // namespace fmtcheck::cuda
