// The GPU's operations for the training step of `hw train`: the step itself
// is the library's (fmtcheck/train/trainer.hpp), the same code `fmtcheck
// train` runs on the emulator; only the casts and the tensor-core GEMMs run
// here, on the device: cvt.rn to fp16/bf16 and a chain of mma.sync m16n8k16
// (m16n8k8 for tf32; fp32 accumulators) per 16×8 block of D, k in order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "fmtcheck/core/format.hpp"
#include "fmtcheck/train/tensor_ops.hpp"

namespace fmtcheck::cuda {

class DeviceOps final : public train::TensorOps {
 public:
  // fp16 or bf16 under the policy of cvt.rn (nearest even, inf on
  // overflow, NVIDIA's NaN). The counts come from the device's results:
  // values, nonzero finite inputs that became zero (tiny_to_zero) and
  // finite inputs that became infinite (overflow). tf32 under truncation
  // (the tf32 recipe's policy): the fp32 bits unchanged, for the mma to
  // read as tensor cores do.
  std::vector<std::uint32_t> cast(const Format& to, const Policy& policy, std::span<const float> x,
                                  FlagCounts& counts) override;
  // fp16, bf16 or tf32 operands without scales; zero-padded to whole tiles
  // (M 16, N 8, K 16: zero products leave every sum as it is) and cropped.
  std::vector<float> gemm(const train::Operand& a, const train::Operand& b, std::size_t m, std::size_t n,
                          std::size_t k) override;
};

// Throws std::invalid_argument unless the operands are fp16, bf16 or tf32 of one
// format, unscaled, and a and b hold m×k and n×k values; DeviceOps checks
// this before any device use.
void check_tile_gemm(const train::Operand& a, const train::Operand& b, std::size_t m, std::size_t n, std::size_t k);

}  // namespace fmtcheck::cuda
