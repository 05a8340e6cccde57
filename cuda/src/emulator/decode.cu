// Codes decoded on the GPU: the library's exact value of a code
// (core/decode.hpp's to_double, the CPU's definition compiled for the
// device) per element, into float32 where float32 holds
// the format, float64 otherwise, as the CPU's decode does.
#include <cuda_runtime.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "kernel_support.cuh"
#include "fmtcheck/batch/decode_batch.hpp"
#include "fmtcheck/core/decode.hpp"
#include "fmtcheck/cuda/emulated_convert.hpp"

namespace fmtcheck::cuda {
namespace {

using namespace detail;

// A NaN becomes float32's quiet NaN of its sign, 0x7FC00000 (the CPU's
// decode); the GPU's conversion from double would drop the sign.
__device__ float as_float(double v) {
  if (isnan(v)) return __uint_as_float(signbit(v) ? 0xFFC00000u : 0x7FC00000u);
  return static_cast<float>(v);  // exact: float32 holds every value of the format
}

template <class Code, class Value>
__global__ void __launch_bounds__(kThreads) decode_kernel(Encoding f, const Code* in, std::size_t n, Value* out) {
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  for (std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) {
    const double v = fmtcheck::to_double(f, in[i]);  // a NaN: double's quiet NaN of its sign
    if constexpr (sizeof(Value) == 4) {
      out[i] = as_float(v);
    } else {
      out[i] = v;
    }
  }
}

template <class Value>
void launch(const Format& from, const void* in, std::size_t n, Value* out) {
  const int grid = grid_size(n);
  const Encoding f = from;
  switch (from.storage_bits) {
    case 8: decode_kernel<<<grid, kThreads>>>(f, static_cast<const std::uint8_t*>(in), n, out); break;
    case 16: decode_kernel<<<grid, kThreads>>>(f, static_cast<const std::uint16_t*>(in), n, out); break;
    default: decode_kernel<<<grid, kThreads>>>(f, static_cast<const std::uint32_t*>(in), n, out); break;
  }
  check(cudaGetLastError(), "decode_kernel launch");
  check(cudaDeviceSynchronize(), "decode_kernel");
}

}  // namespace

bool decodes_to_float32(const Format& from) {
  if (from.storage_bits > 32) {
    throw std::invalid_argument("format " + from.name + " has " + std::to_string(from.storage_bits) +
                                "-bit containers; the GPU decodes formats of at most 32 bits");
  }
  return float32_holds(from);
}

void decode_device_buffer(const void* in, std::size_t n, const Format& from, void* out) {
  if (decodes_to_float32(from)) {
    launch(from, in, n, static_cast<float*>(out));
  } else {
    launch(from, in, n, static_cast<double*>(out));
  }
}

GpuDecoded decode_on_gpu(std::span<const std::uint32_t> codes, const Format& from) {
  const bool to_float32 = decodes_to_float32(from);
  const std::size_t bytes = static_cast<std::size_t>(from.storage_bits / 8);
  std::vector<std::uint8_t> packed(codes.size() * bytes);
  for (std::size_t i = 0; i < codes.size(); ++i) {
    for (std::size_t b = 0; b < bytes; ++b) packed[i * bytes + b] = static_cast<std::uint8_t>(codes[i] >> (8 * b));
  }
  const DeviceBuffer<std::uint8_t> in{std::span<const std::uint8_t>(packed)};
  GpuDecoded decoded;
  if (to_float32) {
    const DeviceBuffer<float> out(codes.size());
    decode_device_buffer(in.get(), codes.size(), from, out.get());
    decoded.float32 = out.to_host();
  } else {
    const DeviceBuffer<double> out(codes.size());
    decode_device_buffer(in.get(), codes.size(), from, out.get());
    decoded.float64 = out.to_host();
  }
  return decoded;
}

}  // namespace fmtcheck::cuda
