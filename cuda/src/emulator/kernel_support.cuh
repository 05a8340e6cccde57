// What the emulator's kernels share (convert.cu, analysis.cu): launch sizes,
// zeroed device counters, and the warp-wide reductions by which each warp
// adds its threads' counts to the device totals with one atomic per lane 0.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

#include "../cuda_check.hpp"
#include "../device_buffer.hpp"
#include "fmtcheck/core/flags.hpp"

namespace fmtcheck::cuda::detail {

inline constexpr int kThreads = 256;

// Enough blocks of kThreads to fill every multiprocessor several times over
// (grid-stride loops take the rest).
inline int grid_size(std::size_t n) {
  int device = 0, sms = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
  const std::size_t wanted = (n + kThreads - 1) / kThreads;
  const std::size_t most = std::size_t(sms) * 8;
  return static_cast<int>(wanted < most ? (wanted == 0 ? 1 : wanted) : most);
}

// Device counters, zeroed.
struct Counters : DeviceBuffer<unsigned long long> {
  explicit Counters(std::size_t n) : DeviceBuffer<unsigned long long>(n) {
    check(cudaMemset(get(), 0, n * sizeof(unsigned long long)), "cudaMemset");
  }
};

__device__ inline unsigned long long warp_sum(unsigned long long v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xFFFFFFFFu, v, offset);
  return v;
}
__device__ inline double warp_sum(double v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xFFFFFFFFu, v, offset);
  return v;
}
__device__ inline double warp_max(double v) {
  for (int offset = 16; offset > 0; offset /= 2) v = fmax(v, __shfl_down_sync(0xFFFFFFFFu, v, offset));
  return v;
}
__device__ inline bool lane_zero() { return (threadIdx.x & 31) == 0; }

// A warp's sum of v added to *total (every lane of the warp must call it).
__device__ inline void add_to_total(unsigned long long v, unsigned long long* total) {
  v = warp_sum(v);
  if (lane_zero() && v != 0) atomicAdd(total, v);
}
__device__ inline void add_to_total(double v, double* total) {
  v = warp_sum(v);
  if (lane_zero() && v != 0) atomicAdd(total, v);
}
// The largest non-negative v of the warp into *largest (a double's bits:
// non-negative doubles order as their bits).
__device__ inline void max_to_total(double v, unsigned long long* largest) {
  v = warp_max(v);
  if (lane_zero() && v > 0) atomicMax(largest, static_cast<unsigned long long>(__double_as_longlong(v)));
}

// values, then one counter per flag: a thread's flag counts in registers.
inline constexpr int kFlagCounters = 1 + flag_count;
__device__ inline void count_flags(unsigned long long (&local)[kFlagCounters], Flags flags) {
  local[0] += 1;
  for (int i = 0; i < flag_count; ++i) local[1 + i] += (flags.bits() >> i) & 1u;
}
__device__ inline void add_flags_to_totals(const unsigned long long (&local)[kFlagCounters],
                                           unsigned long long* totals) {
  for (int i = 0; i < kFlagCounters; ++i) add_to_total(local[i], totals + i);
}

// kFlagCounters device counters as FlagCounts.
inline FlagCounts flag_counts(const std::vector<unsigned long long>& host, std::size_t at = 0) {
  FlagCounts counts;
  counts.values = host[at];
  for (int i = 0; i < flag_count; ++i) counts.count[i] = host[at + 1 + i];
  return counts;
}

}  // namespace fmtcheck::cuda::detail
