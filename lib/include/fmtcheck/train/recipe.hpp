// Mixed-precision recipes: which format each GEMM operand and output takes,
// how tensors are scaled into it, and how the loss is scaled.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "fmtcheck/analysis/scaling.hpp"
#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/policy.hpp"
#include "fmtcheck/tensor_core/tensor_core.hpp"

namespace fmtcheck::train {

// How a tensor's per-tensor scale is chosen before its FP8 cast.
enum class TensorScaling : std::uint8_t {
  none,     // scale 1
  delayed,  // Transformer Engine DelayedScaling: from the amax history of earlier steps
  current,  // Transformer Engine Float8CurrentScaling: from this tensor's own amax
  mx,       // OCP MX as Transformer Engine's MXFP8BlockScaling: an E8M0 scale per 32
            // values along the GEMM's k, the smallest power of two >= block amax / fp8 max
};

// How a weight stored in a low format takes its update.
enum class WeightUpdate : std::uint8_t {
  nearest,     // the float32 sum weight + update rounded to nearest even
  stochastic,  // the same sum rounded stochastically (fmtcheck's sr, a seeded stream)
  kahan,       // compensated: a buffer in the weight format carries what the rounding lost
};

struct Recipe {
  std::string name;
  // GEMM operands: the forward pass's (inputs, weights) and the gradients'.
  // Null: the recipe computes in float32 (an FMA chain, no tensor core).
  const Format* forward = nullptr;
  const Format* gradient = nullptr;
  // Where a GEMM's result and the bias live (torch autocast: the low format;
  // Transformer Engine under bf16 autocast: bf16). Null: float32.
  const Format* activation = nullptr;
  // Casts of GEMM operands: fp16/bf16 as torch (inf on overflow), FP8 as
  // Transformer Engine (cuda_fp8.h's saturating conversion).
  Policy operand_policy;
  TensorScaling scaling = TensorScaling::none;
  bool loss_scaling = false;  // torch GradScaler (fp16)
  // Pure low-precision training: weights and gradients stored in this
  // format, no float32 master copy. Null: float32 weights and gradients.
  const Format* weights = nullptr;
  // The optimizer states' format; null: float32.
  const Format* states = nullptr;
  WeightUpdate update = WeightUpdate::nearest;
};

// Casts to the activation format: torch's, to nearest even, inf on overflow,
// NVIDIA's NaN.
Policy activation_policy();

// Knobs the recipes share, with torch's and Transformer Engine's defaults.
struct RecipeOptions {
  GradScalerConfig scaler;  // init 2^16, growth 2, backoff 0.5, interval 2000
  int amax_history = 1024;
  AmaxCompute amax_compute = AmaxCompute::max;
  int margin = 0;
  // WeightUpdate::stochastic: random bits per rounding, and the stream's
  // seed; the weights of step after step, parameter after parameter, take
  // consecutive positions of the stream.
  int sr_bits = 16;
  std::uint64_t sr_seed = 0;
};

// fp32, tf32 (fp32 with TF32 tensor-core GEMMs; tf32-rne with the operands
// rounded to nearest even, as cuBLAS does), fp16 (GradScaler), bf16,
// fp8-delayed, fp8-current (both HYBRID: e4m3 forward, e5m2 gradients),
// mxfp8 (e4m3 everywhere, TE's default), and pure low-precision training
// FMT-pure, FMT-pure-sr, FMT-pure-kahan, FMT-pure-fp32-states for FMT bf16
// and fp16 (fp16 with GradScaler): FMT autocast, weights, gradients and
// optimizer states in FMT (the last: states in float32). Beyond these names,
// current:FWD[/GRAD], delayed:FWD[/GRAD] and mx:FMT (scaled_recipe_syntax)
// run fp8-current's machinery with that scaling (mx: E8M0 per 32) and any
// formats fmtcheck parses: "current:binary8p3se/binary8p2se", "mx:e2m1".
std::span<const std::string_view> recipe_names();
inline constexpr std::string_view scaled_recipe_syntax = "current:|delayed:FORMAT[/GRADIENT_FORMAT], mx:FORMAT";
std::optional<Recipe> find_recipe(std::string_view name);

// The tensor-core model `--gpu` names: ampere, ada, hopper (wgmma, which has
// the FP8 instructions), blackwell, exact (gpu_names()), or any other preset
// of `fmtcheck mma --model` (volta, mi300x, ...). Null for another name.
const TensorCoreModel* gpu_model(std::string_view gpu);
// Whether `model` runs the recipe's GEMMs; else the reason it does not.
std::optional<std::string> unsupported(const Recipe& recipe, const TensorCoreModel& model);
std::span<const std::string_view> gpu_names();

}  // namespace fmtcheck::train
