#include "fmtcheck/train/memory.hpp"

#include "fmtcheck/train/tensor_ops.hpp"

namespace fmtcheck::train {
namespace {

double bytes(const Format* f) { return f == nullptr ? 4.0 : f->storage_bits / 8.0; }

}  // namespace

MemoryUse memory_use(const Recipe& recipe, const OptimizerConfig& optimizer, double parameters) {
  MemoryUse m;
  const bool autocast = recipe.activation != nullptr;
  if (recipe.weights != nullptr) {
    m.weights = parameters * bytes(recipe.weights);
  } else if (autocast) {
    m.master = parameters * 4;
  } else {
    m.weights = parameters * 4;
  }
  m.gradients = parameters * bytes(recipe.weights);
  const double states = optimizer.kind == OptimizerConfig::Kind::adam ? 2 : optimizer.momentum != 0.0f ? 1 : 0;
  m.states = parameters * states * bytes(recipe.states);
  if (recipe.weights != nullptr && recipe.update == WeightUpdate::kahan) m.states += parameters * bytes(recipe.weights);
  return m;
}

MemoryUse memory_use(const Recipe& recipe, const OptimizerConfig& optimizer, double parameters,
                     const SavedActivations& saved) {
  MemoryUse m = memory_use(recipe, optimizer, parameters);
  const double scales = recipe.scaling == TensorScaling::mx ? 1.0 / mx_block : 0.0;
  m.activations = saved.gemm_inputs * (bytes(recipe.forward) + scales) + saved.activations * bytes(recipe.activation) +
                  saved.float32 * 4;
  return m;
}

}  // namespace fmtcheck::train
