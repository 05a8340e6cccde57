// float32 arrays in and out of the training emulator's bindings: inputs read
// in place, results handed to numpy without a copy (the array owns the vector).
#pragma once

#include <cstddef>
#include <initializer_list>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "arrays.hpp"

namespace fmtcheck::python {

using FloatArray = nb::ndarray<nb::numpy, float>;

inline std::span<const float> floats_of(const Array& a, const char* what) {
  if (a.dtype() != nb::dtype<float>()) throw nb::type_error((std::string(what) + " must be a float32 array").c_str());
  return {static_cast<const float*>(a.data()), a.size()};
}

inline FloatArray to_numpy(std::vector<float> v, std::initializer_list<std::size_t> shape) {
  std::size_t n = 1;
  for (const std::size_t s : shape) n *= s;
  if (n != v.size()) throw std::logic_error("to_numpy: shape does not match the values");
  auto* held = new std::vector<float>(std::move(v));
  nb::capsule owner(held, [](void* p) noexcept { delete static_cast<std::vector<float>*>(p); });
  return FloatArray(held->data(), shape.size(), shape.begin(), owner);
}

}  // namespace fmtcheck::python
