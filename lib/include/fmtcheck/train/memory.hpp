// Bytes a recipe keeps while training: weights, master copy, gradients,
// optimizer states (per parameter, so they scale to any model size) and the
// activations one step saves for its backward pass (the emulated model's).
#pragma once

#include <cstddef>
#include <optional>

#include "fmtcheck/train/model.hpp"
#include "fmtcheck/train/optimizer.hpp"
#include "fmtcheck/train/recipe.hpp"

namespace fmtcheck::train {

struct MemoryUse {
  double weights = 0;      // the weights the forward pass reads, as stored
  double master = 0;       // float32 weights the optimizer updates, when the GEMMs read casts of them
  double gradients = 0;
  double states = 0;       // optimizer states (SGD's momentum, Adam's m and v) and Kahan's compensation
  std::optional<double> activations;  // known for the emulated model only
  [[nodiscard]] double total() const { return weights + master + gradients + states + activations.value_or(0); }
};

// Bytes of `parameters` parameters under `recipe` with `optimizer`. Float32
// recipes (fp32, tf32) keep float32 weights; autocast recipes keep float32
// weights as the master and cast them for each GEMM (torch autocast,
// Transformer Engine); pure low-precision recipes keep the weights and
// gradients in their low format and no master. SGD keeps one state (none
// without momentum), Adam two.
MemoryUse memory_use(const Recipe& recipe, const OptimizerConfig& optimizer, double parameters);
// The same with the activations of `saved`: GEMM inputs in the recipe's
// forward format (MX: plus one E8M0 scale per 32), activations in its
// activation format, float32 in 4 bytes.
MemoryUse memory_use(const Recipe& recipe, const OptimizerConfig& optimizer, double parameters,
                     const SavedActivations& saved);

}  // namespace fmtcheck::train
