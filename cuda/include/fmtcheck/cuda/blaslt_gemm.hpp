// cuBLASLt GEMMs D = A·B + C on chosen inputs, to be compared bit for bit
// with fmtcheck's emulated GEMM (gemm.hpp): fp16, bf16, tf32 and FP8 e4m3
// with per-tensor scale pointers (A, B, D) and FAST_ACCUM on or off.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fmtcheck/core/format.hpp"
#include "fmtcheck/cuda/compare.hpp"
#include "fmtcheck/tensor_core/gemm.hpp"

namespace fmtcheck::cuda {

// What cuBLASLt is asked to compute.
struct BlasLtGemm {
  const Format* input = &formats::fp16;   // A and B: fp16, bf16, tf32 (fp32 words), e4m3
  const Format* output = &formats::fp32;  // D: fp32; e4m3 for FP8 input (C is then not added)
  bool fast_accum = false;                // FP8 only: CUBLASLT_MATMUL_DESC_FAST_ACCUM
  // FP8 only, passed as device pointers (CUBLASLT_MATMUL_DESC_A/B/D_SCALE_POINTER):
  // D = scale_d * (scale_a * scale_b * A·B + C).
  float scale_a = 1.0f, scale_b = 1.0f, scale_d = 1.0f;
  [[nodiscard]] bool fp8() const;
  [[nodiscard]] std::string name() const;  // "e4m3 -> fp32, fast accum, scales a=0.5 b=2 d=1"
};

// Row-major operands: A is M×K and B is K×N container bits of the input
// format (tf32: float32 bits), C is M×N float32.
struct GemmOperands {
  std::size_t m = 0, n = 0, k = 0;
  std::vector<std::uint32_t> a, b;
  std::vector<float> c;
};

// Throws std::invalid_argument for a combination cuBLASLt has no GEMM for
// (e5m2 × e5m2 among them), FP8 options on other types, sizes that
// disagree, or words wider than the input format; before any device use.
void check_gemm(const BlasLtGemm& g, const GemmOperands& x);

// D (row-major M×N, container bits of g.output) from cuBLASLt on device 0,
// with split-K switched off so that K is summed in order (where cuBLASLt
// refuses, its own choice runs); *split_k, when given, says which. Throws
// std::runtime_error when cuBLASLt has no algorithm for it on this GPU.
std::vector<std::uint32_t> run_blaslt_gemm(const BlasLtGemm& g, const GemmOperands& x,
                                           std::string* split_k = nullptr);

// The emulator's D for the same GEMM under `model`, chunks of promote_every
// elements promoted into fp32 (0: none, as FAST_ACCUM); for an e4m3 output
// the fp32 result times scale_d (rounded to fp32) converted to e4m3 with
// SATFINITE and NVIDIA's NaN. on_gpu: the emulated GEMM runs on the GPU
// (emulated_gemm.hpp) instead of the CPU, with the same bits.
std::vector<std::uint32_t> emulate_blaslt_gemm(const BlasLtGemm& g, const DotModel& model, std::size_t promote_every,
                                               const GemmOperands& x, bool on_gpu = false);

// Promotion intervals to try when FAST_ACCUM is off (cuBLASLt does not
// publish its own): powers of two from 32 below K, and K itself (none).
std::vector<std::size_t> promotion_candidates(std::size_t k);

// Random operands: values of moderate magnitude with random fraction bits,
// some zeros and subnormals; tf32 with the low 13 bits zero (cuBLASLt's
// conversion of wider fp32 inputs is not the question here). The same seed
// gives the same operands.
GemmOperands make_gemm_operands(const BlasLtGemm& g, std::size_t m, std::size_t n, std::size_t k, std::uint64_t seed);

// Hardware D against emulated D, element by element; each difference names
// its row and column and lists the row of A, the column of B and C in hex.
Comparison compare_gemm(const BlasLtGemm& g, const GemmOperands& x, const std::vector<std::uint32_t>& hardware,
                        const std::vector<std::uint32_t>& emulator, std::string title);

}  // namespace fmtcheck::cuda
