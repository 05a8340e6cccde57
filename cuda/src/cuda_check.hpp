// The one place CUDA errors become exceptions (C++17: the .cu files include it).
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace fmtcheck::cuda::detail {

inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

}  // namespace fmtcheck::cuda::detail
