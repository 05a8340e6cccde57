// Device memory that frees itself.
#pragma once

#include "cuda_check.hpp"

#include <span>
#include <vector>

namespace fmtcheck::cuda::detail {


template <class T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t n) : n_(n) { check(cudaMalloc(&ptr_, n * sizeof(T)), "cudaMalloc"); }
  explicit DeviceBuffer(std::span<const T> host) : DeviceBuffer(host.size()) {
    check(cudaMemcpy(ptr_, host.data(), n_ * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy to device");
  }
  ~DeviceBuffer() { cudaFree(ptr_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  [[nodiscard]] T* get() const { return ptr_; }
  // Waits for the kernels before it and copies back.
  [[nodiscard]] std::vector<T> to_host() const {
    std::vector<T> host(n_);
    check(cudaMemcpy(host.data(), ptr_, n_ * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy to host");
    return host;
  }

 private:
  std::size_t n_;
  T* ptr_ = nullptr;
};

}  // namespace fmtcheck::cuda::detail
