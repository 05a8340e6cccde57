// Element-wise cvt kernels: one thread per element, one instruction each.
// Instructions newer than the running architecture compile to a trap; the
// host checks the compute capability before launching (convert.cpp).
#include <cuda_runtime.h>

#include "cuda_check.hpp"
#include "kernel_ops.hpp"

namespace fmtcheck::cuda::detail {
namespace {

__device__ std::uint32_t convert_one(ConvertOp op, float x) {
  std::uint16_t h = 0;
  std::uint32_t w = 0;
  switch (op) {
    case ConvertOp::f16_rn: asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x)); return h;
    case ConvertOp::f16_rz: asm("cvt.rz.f16.f32 %0, %1;" : "=h"(h) : "f"(x)); return h;
    case ConvertOp::f16_rp: asm("cvt.rp.f16.f32 %0, %1;" : "=h"(h) : "f"(x)); return h;
    case ConvertOp::f16_rm: asm("cvt.rm.f16.f32 %0, %1;" : "=h"(h) : "f"(x)); return h;
    case ConvertOp::bf16_rn: asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(x)); return h;
    case ConvertOp::bf16_rz: asm("cvt.rz.bf16.f32 %0, %1;" : "=h"(h) : "f"(x)); return h;
    case ConvertOp::tf32_rna: asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(w) : "f"(x)); return w;
#if __CUDA_ARCH__ >= 900
    case ConvertOp::tf32_rn: asm("cvt.rn.tf32.f32 %0, %1;" : "=r"(w) : "f"(x)); return w;
    case ConvertOp::tf32_rz: asm("cvt.rz.tf32.f32 %0, %1;" : "=r"(w) : "f"(x)); return w;
#endif
#if __CUDA_ARCH__ >= 890
    // x2 forms: the second source goes to the low byte.
    case ConvertOp::e4m3_rn: asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(h) : "f"(0.0f), "f"(x)); return h & 0xFF;
    case ConvertOp::e5m2_rn: asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(h) : "f"(0.0f), "f"(x)); return h & 0xFF;
#endif
    default: __trap();
  }
  return 0;
}

__device__ std::uint32_t widen_one(WidenOp op, std::uint32_t bits) {
  float f = 0;
  std::uint32_t pair = 0;
  const auto h = static_cast<std::uint16_t>(bits);
  switch (op) {
    case WidenOp::f16: asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return __float_as_uint(f);
    case WidenOp::bf16: return bits << 16;  // bf16 is the top half of a float32
    case WidenOp::tf32: return bits;        // tf32 lives in a float32 register
#if __CUDA_ARCH__ >= 890
    case WidenOp::e4m3: asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(pair) : "h"(h)); break;
    case WidenOp::e5m2: asm("cvt.rn.f16x2.e5m2x2 %0, %1;" : "=r"(pair) : "h"(h)); break;
#endif
    default: __trap();
  }
  // fp8 -> fp16 is exact, and so is fp16 -> fp32.
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(static_cast<std::uint16_t>(pair & 0xFFFF)));
  return __float_as_uint(f);
}

__global__ void convert_kernel(ConvertOp op, const float* in, std::uint32_t* out, std::size_t n) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = convert_one(op, in[i]);
}

__global__ void widen_kernel(WidenOp op, const std::uint32_t* in, std::uint32_t* out, std::size_t n) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = widen_one(op, in[i]);
}

}  // namespace

void launch_convert(ConvertOp op, const float* in, std::uint32_t* out, std::size_t n, LaunchConfig cfg) {
  convert_kernel<<<cfg.blocks, cfg.threads_per_block>>>(op, in, out, n);
  check(cudaGetLastError(), "convert kernel launch");
}

void launch_widen(WidenOp op, const std::uint32_t* in, std::uint32_t* out, std::size_t n, LaunchConfig cfg) {
  widen_kernel<<<cfg.blocks, cfg.threads_per_block>>>(op, in, out, n);
  check(cudaGetLastError(), "widen kernel launch");
}

}  // namespace fmtcheck::cuda::detail
