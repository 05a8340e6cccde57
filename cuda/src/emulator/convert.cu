// fmtcheck's rounding core on the GPU: one Rounder, built on the host (its
// shared results derived once) and passed by value, rounds every element
// with the CPU's code. Each thread counts its flags in registers; a warp
// sums them and one lane adds them to the device totals.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "kernel_support.cuh"
#include "fmtcheck/core/random.hpp"
#include "fmtcheck/core/round_to_format.hpp"
#include "fmtcheck/cuda/emulated_convert.hpp"

namespace fmtcheck::cuda {
namespace {

using namespace detail;

struct Launch {
  Rounder round;
  RandomStream stream;
  bool stochastic;
};

__device__ Conversion convert_one(const Launch& l, std::uint32_t bits, std::uint64_t i) {
  const Unpacked x = unpack_float32(bits);
  return l.stochastic ? l.round(x, l.stream.draw(i)) : l.round(x);
}

template <typename Code>
__global__ void __launch_bounds__(kThreads) convert_kernel(Launch l, const std::uint32_t* in, std::size_t n,
                                                           Code* out, unsigned long long* totals) {
  unsigned long long local[kFlagCounters] = {};
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  for (std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) {
    const Conversion c = convert_one(l, in[i], i);
    out[i] = static_cast<Code>(c.bits);
    count_flags(local, c.flags);
  }
  add_flags_to_totals(local, totals);
}

// Every float32 bit pattern: input i is the pattern i; the digest sums the
// (input, code) terms, so no code is written.
__global__ void __launch_bounds__(kThreads) sweep_kernel(Launch l, unsigned long long* totals,
                                                         unsigned long long* digest) {
  unsigned long long local[kFlagCounters] = {};
  unsigned long long sum = 0;
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < (std::uint64_t{1} << 32);
       i += stride) {
    const auto bits = static_cast<std::uint32_t>(i);
    const Conversion c = convert_one(l, bits, i);
    sum += sweep_digest_term(bits, c.bits);
    count_flags(local, c.flags);
  }
  add_flags_to_totals(local, totals);
  add_to_total(sum, digest);
}

// in[i] = the bit pattern first + i.
__global__ void __launch_bounds__(kThreads) pattern_kernel(std::uint64_t first, std::size_t n, std::uint32_t* in) {
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  for (std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) {
    in[i] = static_cast<std::uint32_t>(first + i);
  }
}

Launch make_launch(const Format& to, const Policy& p, std::uint64_t seed, std::uint64_t first) {
  check_gpu_target(to);
  return {Rounder(to, p), RandomStream{seed, first}, is_stochastic(p.rounding)};
}

}  // namespace

void check_gpu_target(const Format& to) {
  if (to.storage_bits > 32) {
    throw std::invalid_argument("format " + to.name + " has " + std::to_string(to.storage_bits) +
                                "-bit containers; the GPU converts into formats of at most 32 bits");
  }
}

FlagCounts convert_device_buffer(const float* in, std::size_t n, const Format& to, const Policy& p, void* out,
                                 std::uint64_t seed, std::uint64_t first) {
  const Launch l = make_launch(to, p, seed, first);
  const Counters totals(kFlagCounters);
  const auto* bits = reinterpret_cast<const std::uint32_t*>(in);
  const int grid = grid_size(n);
  switch (to.storage_bits) {
    case 8: convert_kernel<<<grid, kThreads>>>(l, bits, n, static_cast<std::uint8_t*>(out), totals.get()); break;
    case 16: convert_kernel<<<grid, kThreads>>>(l, bits, n, static_cast<std::uint16_t*>(out), totals.get()); break;
    default: convert_kernel<<<grid, kThreads>>>(l, bits, n, static_cast<std::uint32_t*>(out), totals.get()); break;
  }
  check(cudaGetLastError(), "convert_kernel launch");
  check(cudaDeviceSynchronize(), "convert_kernel");
  return flag_counts(totals.to_host());
}

GpuConverted convert_on_gpu(std::span<const float> in, const Format& to, const Policy& p, std::uint64_t seed) {
  check_gpu_target(to);
  const DeviceBuffer<float> device_in(in);
  const std::size_t bytes = static_cast<std::size_t>(to.storage_bits / 8);
  const DeviceBuffer<std::uint8_t> device_out(in.size() * bytes);
  GpuConverted result;
  result.flags = convert_device_buffer(device_in.get(), in.size(), to, p, device_out.get(), seed);
  const std::vector<std::uint8_t> raw = device_out.to_host();
  result.codes.resize(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    std::uint32_t code = 0;
    for (std::size_t b = 0; b < bytes; ++b) code |= std::uint32_t{raw[i * bytes + b]} << (8 * b);
    result.codes[i] = code;
  }
  return result;
}

FlagCounts convert_float32_patterns(std::uint64_t first, std::size_t count, const Format& to, const Policy& p,
                                    std::uint64_t seed, void* host_out) {
  if (first + count > (std::uint64_t{1} << 32)) {
    throw std::invalid_argument("convert_float32_patterns: the patterns end past 2^32");
  }
  check_gpu_target(to);
  const DeviceBuffer<std::uint32_t> in(count);
  const std::size_t bytes = count * static_cast<std::size_t>(to.storage_bits / 8);
  const DeviceBuffer<std::uint8_t> out(bytes);
  pattern_kernel<<<grid_size(count), kThreads>>>(first, count, in.get());
  check(cudaGetLastError(), "pattern_kernel launch");
  const FlagCounts flags =
      convert_device_buffer(reinterpret_cast<const float*>(in.get()), count, to, p, out.get(), seed, first);
  check(cudaMemcpy(host_out, out.get(), bytes, cudaMemcpyDeviceToHost), "cudaMemcpy to host");
  return flags;
}

Float32Sweep sweep_every_float32_on_gpu(const Format& to, const Policy& p, std::uint64_t seed) {
  const Launch l = make_launch(to, p, seed, 0);
  const Counters totals(kFlagCounters), digest(1);
  sweep_kernel<<<grid_size(std::size_t{1} << 32), kThreads>>>(l, totals.get(), digest.get());
  check(cudaGetLastError(), "sweep_kernel launch");
  check(cudaDeviceSynchronize(), "sweep_kernel");
  Float32Sweep s;
  s.flags = flag_counts(totals.to_host());
  s.digest = digest.to_host()[0];
  return s;
}

}  // namespace fmtcheck::cuda
