#include "gpu.hpp"

#include <nanobind/stl/string.h>

#include <stdexcept>

#include "bindings.hpp"

#if defined(FMTCHECK_HAS_CUDA)
#include "fmtcheck/cuda/device.hpp"
#include "fmtcheck/cuda/emulated_convert.hpp"
#endif

namespace fmtcheck::python {
namespace {

// Why the GPU cannot be used, or "" when it can.
std::string gpu_unavailable() {
#if defined(FMTCHECK_HAS_CUDA)
  std::string why;
  return cuda::find_device(&why) ? std::string() : "no GPU found: " + why;
#else
  return "this fmtcheck was built without CUDA (no nvcc when it was built)";
#endif
}

}  // namespace

void use_gpu(int ordinal) {
  const std::string why = gpu_unavailable();
  if (!why.empty()) throw std::invalid_argument("device='cuda': " + why);
#if defined(FMTCHECK_HAS_CUDA)
  cuda::use_device(ordinal);
#else
  (void)ordinal;
#endif
}

void bind_gpu(nb::module_& m) {
  m.def("gpu_unavailable", &gpu_unavailable,
        "Why fmtcheck cannot compute on the GPU here (built without CUDA, no GPU found), or \"\" when it can.");
  m.def("use_gpu", &use_gpu, nb::arg("ordinal"),
        "Makes GPU `ordinal` current, or raises ValueError(\"device='cuda': <why not>\").");
}

}  // namespace fmtcheck::python
