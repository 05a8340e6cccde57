// A tensor-core model behind the DotKernel interface, so matmul over value
// types can accumulate exactly as a GPU's MMA instruction does.
#include <stdexcept>

#include "fmtcheck/tensor_core/tensor_core.hpp"

namespace fmtcheck {

DotKernel tensor_core_kernel(const TensorCoreModel& model) {
  return [model](const Format& in, std::span<const std::uint64_t> a, std::span<const std::uint64_t> b,
                 const Format& out, const Policy&) {
    if (!is_tensor_core_output(out)) {
      throw std::invalid_argument("tensor_core_kernel: a tensor core writes fp32 or fp16, not " + out.name);
    }
    const auto dot = model.for_input(in);
    if (!dot) throw std::invalid_argument("tensor_core_kernel: model " + model.name + " takes no " + in.name + " inputs");
    return dot_product_add(*dot, in, a, b, /*c=+0*/ 0, out);
  };
}

}  // namespace fmtcheck
