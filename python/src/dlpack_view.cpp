// A DLPack producer's memory as a numpy array, for the functions whose Python
// front works on numpy arrays (decode, the arithmetic, dot, gemm). numpy has
// no bfloat16 or FP8 type and numpy.from_dlpack refuses them, so those come
// back as their unsigned codes with the format they hold.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <vector>

#include "arrays.hpp"
#include "bindings.hpp"

namespace fmtcheck::python {
namespace {

using View = nb::ndarray<nb::numpy, nb::ro>;

nb::tuple dlpack_view(const Array& a) {
  std::vector<std::size_t> shape(a.ndim());
  for (std::size_t d = 0; d < a.ndim(); ++d) shape[d] = a.shape(d);
  const std::optional<std::string> format = dtype_format(a);
  nb::dlpack::dtype dtype = a.dtype();
  if (format) {
    dtype = a.dtype().bits == 8 ? nb::dtype<std::uint8_t>() : nb::dtype<std::uint16_t>();
  } else if (a.dtype().code > static_cast<std::uint8_t>(nb::dlpack::dtype_code::Bool)) {
    throw nb::type_error(("expected float32, float64, float16, bfloat16, an FP8 type or unsigned codes, not " +
                          dtype_name(a)).c_str());
  }
  // The view holds the imported tensor: the producer's deleter runs when the view goes, as DLPack asks.
  nb::capsule owner(new Array(a), [](void* held) noexcept { delete static_cast<Array*>(held); });
  return nb::make_tuple(View(a.data(), a.ndim(), shape.data(), owner, nullptr, dtype), format);
}

}  // namespace

void bind_dlpack_view(nb::module_& m) {
  m.def("dlpack_view", &dlpack_view, nb::arg("array"),
        "A DLPack producer's memory (C-contiguous, on the CPU) as a read-only numpy array, without a copy,\n"
        "and the format of its codes where numpy has no type for it (bfloat16 -> \"bf16\", the FP8 types),\n"
        "else None.");
}

}  // namespace fmtcheck::python
