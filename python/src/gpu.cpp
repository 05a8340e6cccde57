#include "gpu.hpp"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <functional>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "bindings.hpp"

#if defined(FMTCHECK_HAS_CUDA)
#include "fmtcheck/cuda/device.hpp"
#include "fmtcheck/cuda/device_memory.hpp"
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

// An element type of the arrays gpu_zeros makes, by numpy's name.
nb::dlpack::dtype dtype_named(const std::string& name) {
  if (name == "float32") return nb::dtype<float>();
  if (name == "float64") return nb::dtype<double>();
  if (name == "uint8") return nb::dtype<std::uint8_t>();
  if (name == "uint16") return nb::dtype<std::uint16_t>();
  if (name == "uint32") return nb::dtype<std::uint32_t>();
  throw nb::type_error(("gpu_zeros makes float32, float64, uint8, uint16 or uint32 arrays, not " + name).c_str());
}

// A zeroed C-contiguous array on GPU `ordinal`, in memory fmtcheck
// allocates: a DLPack producer any framework imports without a copy, the
// memory freed when the last owner lets go.
nb::ndarray<nb::device::cuda> gpu_zeros(const std::vector<std::size_t>& shape, const std::string& dtype, int ordinal) {
  const nb::dlpack::dtype type = dtype_named(dtype);
  use_gpu(ordinal);
  const std::size_t count = std::accumulate(shape.begin(), shape.end(), std::size_t{1}, std::multiplies<>());
  void* memory = nullptr;
#if defined(FMTCHECK_HAS_CUDA)
  memory = cuda::allocate_zeroed(count * type.bits / 8);
  nb::capsule owner(memory, [](void* p) noexcept { cuda::release(p); });
#else
  (void)count;  // use_gpu has said this build has no CUDA
  nb::capsule owner;
#endif
  return {memory, shape.size(), shape.data(), owner, nullptr, type, nb::device::cuda::value, ordinal};
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
  m.def("gpu_zeros", &gpu_zeros, nb::arg("shape"), nb::arg("dtype"), nb::arg("ordinal"),
        "A zeroed array (float32, float64, uint8, uint16 or uint32) on GPU `ordinal`, owned by fmtcheck until a framework\n"
        "imports it through DLPack (torch.from_dlpack, cupy.from_dlpack, jax.numpy.from_dlpack).");
}

}  // namespace fmtcheck::python
