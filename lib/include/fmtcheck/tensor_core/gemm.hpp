// An emulated GEMM D = A·B + C on a tensor-core model, with what libraries
// do around the instruction: per-tensor scale factors, promotion of partial
// sums into an fp32 accumulator (CUTLASS, DeepSeek-V3) or none (cuBLASLt
// FAST_ACCUM), and split-K.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "fmtcheck/core/format.hpp"
#include "fmtcheck/tensor_core/tensor_core.hpp"

namespace fmtcheck {

struct GemmConfig {
  DotModel model;                     // the instruction's arithmetic for `input` (and `input_b`)
  Format input = formats::e4m3;       // element format of A, and of B unless input_b is set
  std::optional<Format> input_b;      // element format of B when it differs (E4M3 x E5M2 backward passes)
  Format accumulator = formats::fp32;  // the instruction's C/D: fp32, or fp16 (mma ... .f16 accumulators)
  float scale_a = 1.0f;               // per-tensor scale factors (FP8 dequantisation)
  float scale_b = 1.0f;
  std::size_t promote_every = 0;      // K elements per tensor-core chunk; 0: the whole slice (no promotion)
  std::size_t split_k = 1;            // K cut into this many slices, reduced in fp32 at the end
  unsigned threads = 0;               // 0: one per hardware thread, fewer for a small GEMM
};

// D = A·B + C, row-major: A is M×K container bits of config.input, B K×N
// container bits of config.input_b (or config.input), C and D are M×N
// float32 (D may not alias A or B). Models of every structure are taken
// and run a fast kernel (gemm_kernel.hpp), bit for bit dot_product_add's
// (NaN or infinite operands go to dot_product_add itself). Like the
// promotion and the epilogue, CDNA2's fp32 sums use float arithmetic and
// assume the default floating-point environment (nearest even, no FTZ/DAZ).
//
// For each slice of K (split_k of them, nearly equal, in order) the tensor
// core computes each chunk of promote_every elements (or the whole slice)
// from a zero accumulator, in blocks of L chained along k through an
// accumulator of config.accumulator (each block's D, rounded to that format,
// is the next block's C). Each chunk's result p is promoted into the slice's
// fp32 accumulator with one IEEE fp32 addition, acc = acc + p rounded to
// nearest even, as CUTLASS's FP8 kernels do (GmmaFP8Accumulation); the
// slices' accumulators are added in fp32, in order. The epilogue is CUTLASS's
// LinearCombination with alpha = s = scale_a * scale_b (rounded to fp32) and
// beta = 1: D = fma(s, total, C), one rounding to nearest even.
void gemm(const GemmConfig& config, std::size_t m, std::size_t n, std::size_t k, std::span<const std::uint32_t> a,
          std::span<const std::uint32_t> b, std::span<const float> c, std::span<float> d);

// gemm() with B given as N×K, k-contiguous ("TN": row j of B is column j of
// the product, as the training emulator and the MX GEMM hold operands), read
// in place instead of transposed first. The same bits as gemm() of Bᵀ.
void gemm_tn(const GemmConfig& config, std::size_t m, std::size_t n, std::size_t k, std::span<const std::uint32_t> a,
             std::span<const std::uint32_t> b, std::span<const float> c, std::span<float> d);

// A GEMM over block-scaled operands (OCP MX, NVFP4) on a Blackwell
// block-scaled instruction (tensor_core.hpp). Each value along k belongs to
// a block of scale_block values with one scale code; each instruction takes
// instruction_k values (a multiple of scale_block) and their scales.
struct BlockScaledGemmConfig {
  BlockScaledModel model = blackwell_mxf8f6f4;
  Format input = formats::e4m3;         // element format of A and B
  Format scale_format = formats::e8m0;  // e8m0 (UE8M0) or e4m3 (UE4M3)
  std::size_t scale_block = 32;         // S: values per scale along k
  std::size_t instruction_k = 32;       // K of one instruction
  unsigned threads = 0;                 // 0: one per hardware thread, fewer for a small GEMM
};

// D = A·Bᵀ, float32 M×N row-major, with A M×K and B N×K container bits of
// config.input, both K-contiguous ("TN", as the hardware takes MX operands);
// scale_a (M × K/S) and scale_b (N × K/S) hold the scale codes, row by row.
// Each element of D is, bit for bit, block_scaled_dot_product_add chained
// along k: one instruction per instruction_k values from C = +0, each one's D
// the next one's C. It decodes every element and scale once, not once per
// output that reads it. Throws std::invalid_argument for sizes that do not
// match or divide, and for what block_scaled_dot_product_add refuses.
void gemm_block_scaled(const BlockScaledGemmConfig& config, std::size_t m, std::size_t n, std::size_t k,
                       std::span<const std::uint32_t> a, std::span<const std::uint32_t> b,
                       std::span<const std::uint8_t> scale_a, std::span<const std::uint8_t> scale_b,
                       std::span<float> d);

}  // namespace fmtcheck
