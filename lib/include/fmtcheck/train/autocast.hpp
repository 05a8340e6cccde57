// The precision layer between a model and the hardware: it casts GEMM
// operands to the recipe's formats (scaled per tensor under FP8 recipes),
// runs the GEMM on TensorOps, rounds results to the activation format, and
// records what each cast did to each named tensor in this step.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "fmtcheck/analysis/scaling.hpp"
#include "fmtcheck/core/flags.hpp"
#include "fmtcheck/train/recipe.hpp"
#include "fmtcheck/train/tensor_ops.hpp"

namespace fmtcheck::train {

// One tensor's cast in one step.
struct TensorStats {
  float amax = 0;    // max |x| of the float32 tensor before scaling (NaN if it holds a NaN)
  float scale = 1;   // the per-tensor scale it was multiplied by before the cast (MX: 1, its scales are per block)
  FlagCounts flags;  // of the cast
};

// A tensor as a GEMM operand: rows×cols container bits, k = cols (under MX
// padded with zeros to whole blocks).
struct Quantized {
  const Format* format = nullptr;
  std::vector<std::uint32_t> bits;
  float scale_inv = 1.0f;
  std::size_t rows = 0, cols = 0;
  std::vector<std::uint8_t> block_scales;  // MX: E8M0 codes, rows × cols/32
  [[nodiscard]] Operand operand() const { return {format, bits, scale_inv, block_scales}; }
  // The same values as a cols×rows operand (per-tensor scales survive a transpose).
  [[nodiscard]] Quantized transposed() const;
};

enum class Role : std::uint8_t { forward, gradient };

class Autocast {
 public:
  Autocast(const Recipe& recipe, const RecipeOptions& options, TensorOps& ops);

  [[nodiscard]] const Recipe& recipe() const { return recipe_; }
  [[nodiscard]] bool float32() const { return recipe_.forward == nullptr; }

  // x (rows×cols) cast to the recipe's format for `role`, recorded as `name`.
  Quantized operand(const std::string& name, Role role, std::span<const float> x, std::size_t rows, std::size_t cols);
  // The same tensor as a cols×rows operand (k = rows), for the GEMMs of the
  // backward pass: `rowwise` transposed, or under MX (whose blocks run along
  // k) `source` cast again along its columns, recorded as NAME.t.
  Quantized columnwise(const std::string& name, Role role, const Quantized& rowwise, std::span<const float> source);
  // (a.scale_inv · b.scale_inv) · A·Bᵀ in float32 on the tensor core.
  std::vector<float> gemm(const Quantized& a, const Quantized& b);
  // x rounded to the activation format (unchanged in float32), recorded as
  // `name` when named; a name met again in the same step adds to its record
  // (attention's GEMMs, one per sequence and head).
  std::vector<float> to_activation(const std::string& name, std::vector<float> x);
  // C (m×n) = A·Bᵀ (A m×k, B n×k) in the activation format: torch
  // autocast's bmm, which Transformer Engine keeps out of FP8 too; an FMA
  // chain under fp32, a float32 tensor-core GEMM of tf32 operands under
  // tf32. The operands are cast (unrecorded), the product is rounded to the
  // activation format and recorded as `name`.
  std::vector<float> activation_matmul(const std::string& name, std::span<const float> a, std::span<const float> b,
                                       std::size_t m, std::size_t n, std::size_t k);

  // This step's record, tensors in the order first seen; cleared by begin_step().
  void begin_step() { step_.clear(); }
  [[nodiscard]] const std::vector<std::pair<std::string, TensorStats>>& step_stats() const { return step_; }

 private:
  TensorStats& record(const std::string& name, bool accumulate);
  float scale_for(const std::string& name, const Format& format, float amax);

  Recipe recipe_;
  RecipeOptions options_;
  TensorOps& ops_;
  std::map<std::string, DelayedScaling> delayed_;
  std::vector<std::pair<std::string, TensorStats>> step_;
};

// max |x|, NaN if x holds a NaN (torch.amax of abs).
float amax_of(std::span<const float> x);
// Container bits of `f` as float32 values (every format the trainer casts to fits).
std::vector<float> decode(const Format& f, std::span<const std::uint32_t> bits);

}  // namespace fmtcheck::train
