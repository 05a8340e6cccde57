#include "fmtcheck/cuda/device.hpp"

#include <cuda_runtime.h>

#include <stdexcept>

namespace fmtcheck::cuda {

std::optional<DeviceInfo> find_device(std::string* why) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    if (why) *why = e != cudaSuccess ? cudaGetErrorString(e) : "the driver reports no devices";
    return std::nullopt;
  }
  cudaDeviceProp prop{};
  if (const cudaError_t p = cudaGetDeviceProperties(&prop, 0); p != cudaSuccess) {
    if (why) *why = cudaGetErrorString(p);
    return std::nullopt;
  }
  DeviceInfo info;
  info.name = prop.name;
  info.major = prop.major;
  info.minor = prop.minor;
  info.memory_bytes = prop.totalGlobalMem;
  info.multiprocessors = prop.multiProcessorCount;
  cudaDriverGetVersion(&info.driver_version);
  cudaRuntimeGetVersion(&info.runtime_version);
  return info;
}

DeviceInfo require_device() {
  std::string why;
  if (auto d = find_device(&why)) return *d;
  throw std::runtime_error("no GPU found: " + why);
}

const char* built_architectures() { return FMTCHECK_CUDA_ARCHITECTURES; }

}  // namespace fmtcheck::cuda
