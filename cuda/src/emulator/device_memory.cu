#include "fmtcheck/cuda/device_memory.hpp"

#include <cuda_runtime.h>

#include "../cuda_check.hpp"

namespace fmtcheck::cuda {

using detail::check;

void use_device(int ordinal) { check(cudaSetDevice(ordinal), "cudaSetDevice"); }

void* allocate_zeroed(std::size_t bytes) {
  void* memory = nullptr;
  check(cudaMalloc(&memory, bytes == 0 ? 1 : bytes), "cudaMalloc");
  const cudaError_t zeroed = cudaMemset(memory, 0, bytes);
  if (zeroed != cudaSuccess) cudaFree(memory);
  check(zeroed, "cudaMemset");
  return memory;
}

void release(void* memory) noexcept { cudaFree(memory); }

}  // namespace fmtcheck::cuda
