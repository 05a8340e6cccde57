// The GPU this process runs on, if any: what `fmtcheck hw info` prints and
// what every hardware comparison checks first.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace fmtcheck::cuda {

struct DeviceInfo {
  std::string name;
  int major = 0, minor = 0;  // compute capability
  int driver_version = 0;    // CUDA version the driver supports, e.g. 13000
  int runtime_version = 0;   // CUDA runtime this binary was built with
  std::size_t memory_bytes = 0;
  int multiprocessors = 0;
  [[nodiscard]] int compute_capability() const { return major * 10 + minor; }
};

// Device 0, or nullopt with the reason in *why ("no CUDA-capable device is
// detected", "CUDA driver version is insufficient", ...).
std::optional<DeviceInfo> find_device(std::string* why);

// Device 0, or std::runtime_error("no GPU found: <why>").
DeviceInfo require_device();

// The compute capabilities this binary carries code for (the fat binary).
const char* built_architectures();

}  // namespace fmtcheck::cuda
