// The operations a training step asks of the hardware: rounding float32
// tensors to a low format, and the tensor-core GEMM of two low-format
// operands. The step (trainer.hpp) is written once over this interface;
// EmulatedOps implements it with the library's conversions and gemm() under a
// tensor-core model, and cuda/ implements it with cvt and mma on a GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "fmtcheck/core/flags.hpp"
#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/policy.hpp"
#include "fmtcheck/tensor_core/gemm.hpp"
#include "fmtcheck/tensor_core/tensor_core.hpp"

namespace fmtcheck::train {

// One GEMM operand: rows × k container bits of `format`, k contiguous.
// scale_inv multiplies the product (a per-tensor FP8 dequantisation factor).
// Under MX block scaling, block_scales holds E8M0 codes, one per 32 values
// along k of each row (rows × k/32): element e of block b means e·2^(code - 127).
struct Operand {
  const Format* format = nullptr;
  std::span<const std::uint32_t> bits;
  float scale_inv = 1.0f;
  std::span<const std::uint8_t> block_scales = {};  // MX: one E8M0 code per 32 values along K; empty otherwise
};

inline constexpr std::size_t mx_block = 32;

class TensorOps {
 public:
  virtual ~TensorOps() = default;
  // x rounded to `to` under `policy`; adds each value's flags to `counts`.
  virtual std::vector<std::uint32_t> cast(const Format& to, const Policy& policy, std::span<const float> x,
                                          FlagCounts& counts) = 0;
  // D (m×n float32) = (a.scale_inv · b.scale_inv) · A·Bᵀ with A m×k and B
  // n×k ("TN": both operands k-contiguous), on the tensor core.
  virtual std::vector<float> gemm(const Operand& a, const Operand& b, std::size_t m, std::size_t n,
                                  std::size_t k) = 0;
};

// The emulator: convert_parallel for casts, gemm() (fp32 accumulation, no
// split-K, scale epilogue) under `model` for products. MX operands go to the
// block-scaled instruction (Blackwell: gemm_block_scaled, one
// block_scaled_dot_product_add instruction per 32 values of k chained
// through its fp32 C) or, under the
// `exact` model, to the exact dot product of the dequantised values (each an
// FP8 value times a power of two, exact in tf32). An FP8 GEMM of e5m2
// by e4m3 operands (a gradient times a weight) reads each operand in its own
// format on the arithmetic both share (GemmConfig::input_b), as the
// hardware does.
class EmulatedOps final : public TensorOps {
 public:
  // Run one gemm_tn() and one gemm_block_scaled() (gemm.hpp's signatures:
  // both take B as N×K): the CPU's, on as many threads as the GEMM's size
  // repays, unless told otherwise. The Python package passes the GPU's
  // (cuda/, the same bits) for fmtcheck.torch.emulate(device="cuda").
  using GemmRunner = std::function<void(const GemmConfig&, std::size_t m, std::size_t n, std::size_t k,
                                        std::span<const std::uint32_t> a, std::span<const std::uint32_t> b,
                                        std::span<const float> c, std::span<float> d)>;
  using BlockScaledRunner =
      std::function<void(const BlockScaledGemmConfig&, std::size_t m, std::size_t n, std::size_t k,
                         std::span<const std::uint32_t> a, std::span<const std::uint32_t> b,
                         std::span<const std::uint8_t> scale_a, std::span<const std::uint8_t> scale_b,
                         std::span<float> d)>;

  explicit EmulatedOps(const TensorCoreModel& model) : model_(model) {}
  std::vector<std::uint32_t> cast(const Format& to, const Policy& policy, std::span<const float> x,
                                  FlagCounts& counts) override;
  std::vector<float> gemm(const Operand& a, const Operand& b, std::size_t m, std::size_t n, std::size_t k) override;
  void run_gemms_with(GemmRunner gemm, BlockScaledRunner block_scaled) {
    runner_ = std::move(gemm);
    block_scaled_runner_ = std::move(block_scaled);
  }

 private:
  std::vector<float> gemm_block_scaled(const Operand& a, const Operand& b, std::size_t m, std::size_t n, std::size_t k);
  void run_gemm(const GemmConfig& config, std::size_t m, std::size_t n, std::size_t k, std::span<const std::uint32_t> a,
                std::span<const std::uint32_t> b, std::span<const float> c, std::span<float> d) const;
  const TensorCoreModel& model_;
  GemmRunner runner_;                        // empty: fmtcheck::gemm_tn
  BlockScaledRunner block_scaled_runner_;  // empty: fmtcheck::gemm_block_scaled
};

}  // namespace fmtcheck::train
