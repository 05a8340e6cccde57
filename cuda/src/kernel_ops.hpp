// What the .cu kernels implement, shared by the kernels and the host tables
// (convert.cpp, mma.cpp) so that both index the same operations.
#pragma once

#include <cstddef>
#include <cstdint>

#include "fmtcheck/cuda/launch.hpp"

namespace fmtcheck::cuda::detail {

// float32 -> format; the order of device_conversions().
enum class ConvertOp : int { f16_rn, f16_rz, f16_rp, f16_rm, bf16_rn, bf16_rz, tf32_rna, tf32_rn, tf32_rz, e4m3_rn, e5m2_rn };
inline constexpr int convert_op_count = 11;
// format -> float32.
enum class WidenOp : int { f16, bf16, tf32, e4m3, e5m2 };
// The order of mma_instructions(): the mma.sync ones, then the wgmma ones
// in the same order (WgmmaOp).
enum class MmaOp : int { f16_f32, f16_f16, bf16_f32, tf32_f32, e4m3_f32, e4m3_f16, e5m2_f32, e5m2_f16 };
inline constexpr int mma_op_count = 8;
using WgmmaOp = MmaOp;

// Launchers over device pointers; they report launch errors by throwing
// std::runtime_error (the .cu side calls check()).
void launch_convert(ConvertOp op, const float* in, std::uint32_t* out, std::size_t n, LaunchConfig cfg);
void launch_widen(WidenOp op, const std::uint32_t* in, std::uint32_t* out, std::size_t n, LaunchConfig cfg);
void launch_mma(MmaOp op, const std::uint32_t* a, const std::uint32_t* b, const std::uint32_t* c, std::uint32_t* d,
                std::size_t tiles, LaunchConfig cfg);
// D = A·B as a chain of mma.sync tiles (f16_f32 or bf16_f32 only).
void launch_tile_gemm(MmaOp op, const std::uint32_t* a, const std::uint32_t* b, std::uint32_t* d, int m, int n, int k,
                      LaunchConfig cfg);
void launch_wgmma(WgmmaOp op, const std::uint32_t* a, const std::uint32_t* b, const std::uint32_t* c, std::uint32_t* d,
                  std::size_t tiles, LaunchConfig cfg);

}  // namespace fmtcheck::cuda::detail
