// Tensor analysis on the GPU: the library's analyze_passes decides what
// each read of the tensor measures; a read here is a few kernels over the
// device buffer. Each value goes through the library's own code compiled
// for the device: float32's binade (the input summary), the Rounder (the
// conversion and its flags), value_measures.hpp (errors, an MX block's
// scale). Threads count in registers, warps reduce, one lane adds.
#include <cuda_runtime.h>

#include <bit>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernel_support.cuh"
#include "fmtcheck/analysis/value_measures.hpp"
#include "fmtcheck/core/random.hpp"
#include "fmtcheck/core/round_to_format.hpp"
#include "fmtcheck/cuda/emulated_analysis.hpp"
#include "fmtcheck/cuda/emulated_convert.hpp"

namespace fmtcheck::cuda {
namespace {

using namespace detail;

// float32's nonzero finite binades: 2^-149 .. 2^127.
constexpr int kMinBinade = -149;
constexpr int kBinades = 127 - kMinBinade + 1;

// The input summary's device counters: values by kind, amax's bits, and per
// binade the values and the powers of two among them.
struct SummaryCounters {
  unsigned long long zero, nan, inf;
  unsigned int amax_bits;
  unsigned long long binade[kBinades], power_of_two[kBinades];
};

__global__ void __launch_bounds__(kThreads) summary_kernel(const std::uint32_t* x, std::size_t n,
                                                           SummaryCounters* t) {
  __shared__ unsigned long long binade[kBinades], power_of_two[kBinades];
  for (int i = threadIdx.x; i < kBinades; i += blockDim.x) binade[i] = power_of_two[i] = 0;
  __syncthreads();
  unsigned long long zero = 0, nan = 0, inf = 0;
  unsigned int amax = 0;
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  for (std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) {
    const std::uint32_t m = x[i] & 0x7FFFFFFFu;
    if (m == 0) {
      ++zero;
    } else if (m >= 0x7F800000u) {
      m == 0x7F800000u ? ++inf : ++nan;
    } else {
      amax = m > amax ? m : amax;
      const int b = fmtcheck::detail::binade_of<std::uint32_t, 23, 127>(m) - kMinBinade;
      atomicAdd(&binade[b], 1ull);
      if (fmtcheck::detail::is_power_of_two<std::uint32_t, 23>(m)) atomicAdd(&power_of_two[b], 1ull);
    }
  }
  add_to_total(zero, &t->zero);
  add_to_total(nan, &t->nan);
  add_to_total(inf, &t->inf);
  for (int offset = 16; offset > 0; offset /= 2) {
    const unsigned int other = __shfl_down_sync(0xFFFFFFFFu, amax, offset);
    amax = other > amax ? other : amax;
  }
  if (lane_zero()) atomicMax(&t->amax_bits, amax);
  __syncthreads();
  for (int i = threadIdx.x; i < kBinades; i += blockDim.x) {
    if (binade[i] != 0) atomicAdd(&t->binade[i], binade[i]);
    if (power_of_two[i] != 0) atomicAdd(&t->power_of_two[i], power_of_two[i]);
  }
}

// One conversion of every value, x * scale in float32 (as the CPU scales a
// float32 tensor), with the flags and, when asked, the errors.
struct Measure {
  Rounder round;
  RandomStream stream;
  bool stochastic;
  float scale;
  Encoding to;
  bool errors;
};

// The conversion of value i (global index) of a tensor scaled by `scale`.
__device__ Conversion convert_scaled(const Rounder& round, const RandomStream& stream, bool stochastic, float x,
                                     float scale, std::uint64_t i) {
  const float s = scale != 1.0f ? x * scale : x;  // no multiplication at 1: it would quiet a signaling NaN
  const Unpacked u = unpack_float32(__float_as_uint(s));
  return stochastic ? round(u, stream.draw(i)) : round(u);
}

// The error measures of a conversion at `scale` (a power of two when pow2).
struct ErrorScale {
  double scale;
  bool pow2;
  double inverse;
};

// Device totals of one Measure: flag counts, then the errors' counts, their
// largest values (as bits) and sums.
constexpr int kErrorCounts = 7;
struct MeasureCounters {
  unsigned long long flags[kFlagCounters];
  unsigned long long counts[kErrorCounts];
  unsigned long long max_abs_bits, max_rel_bits;
  double sum_rel, sum_sq_rel;
};

__device__ void add_errors_to_totals(const ValueErrors& e, MeasureCounters* t) {
  const unsigned long long counts[kErrorCounts] = {e.nan_in, e.inf_in, e.nonfinite_out, e.overflow, e.exact,
                                                   e.error_count, e.rel_error_count};
  for (int i = 0; i < kErrorCounts; ++i) add_to_total(counts[i], t->counts + i);
  max_to_total(e.max_abs_error, &t->max_abs_bits);
  max_to_total(e.max_rel_error, &t->max_rel_bits);
  add_to_total(e.sum_rel_error, &t->sum_rel);
  add_to_total(e.sum_sq_rel_error, &t->sum_sq_rel);
}

__global__ void __launch_bounds__(kThreads) measure_kernel(Measure m, ErrorScale es, const float* x, std::size_t n,
                                                           MeasureCounters* t) {
  unsigned long long local[kFlagCounters] = {};
  ValueErrors e;
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  for (std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) {
    const Conversion c = convert_scaled(m.round, m.stream, m.stochastic, x[i], m.scale, i);
    count_flags(local, c.flags);
    if (m.errors) {
      add_value_errors(x[i], fmtcheck::to_double(m.to, c.bits), es.scale, es.pow2, es.inverse, e);
    }
  }
  add_flags_to_totals(local, t->flags);
  if (m.errors) add_errors_to_totals(e, t);
}

// One MX block's outcome, written per block and gathered on the host in the
// tensor's order (BlockTotals, and the blocks when kept).
struct BlockOut {
  double amax;
  int scale_log2;
  unsigned long long flags[kFlagCounters];
  ValueErrors errors;
};

struct Blocks {
  Rounder round;
  bool stochastic;
  Encoding element;
  int max_exponent;
  double element_max;
  BlockScaleRule rule;
  std::size_t block;
};

// One thread per block: its amax, its scale, then each value converted at
// that scale, drawing as the CPU does (seed 0, value i of the tensor).
__global__ void __launch_bounds__(kThreads) blocks_kernel(Blocks b, const float* x, std::size_t n, BlockOut* out) {
  const std::size_t blocks = (n + b.block - 1) / b.block;
  const RandomStream stream{0, 0};
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  for (std::size_t k = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; k < blocks; k += stride) {
    const std::size_t start = k * b.block, end = start + b.block < n ? start + b.block : n;
    BlockOut o{};
    for (std::size_t i = start; i < end; ++i) {
      const double v = fabs(static_cast<double>(x[i]));
      if (v < INFINITY) o.amax = v > o.amax ? v : o.amax;
    }
    o.scale_log2 = block_scale_exponent(o.amax, b.max_exponent, b.element_max, b.rule);
    const float scale = ldexpf(1.0f, -o.scale_log2);
    const double inverse = ldexp(1.0, o.scale_log2);
    for (std::size_t i = start; i < end; ++i) {
      const Conversion c = convert_scaled(b.round, stream, b.stochastic, x[i], scale, i);
      count_flags(o.flags, c.flags);
      add_value_errors(x[i], fmtcheck::to_double(b.element, c.bits), scale, true, inverse, o.errors);
    }
    out[k] = o;
  }
}

template <class T>
T read_back(const DeviceBuffer<T>& d) {
  return d.to_host()[0];
}

InputSummary summarize(const float* x, std::size_t n) {
  const DeviceBuffer<SummaryCounters> counters(1);
  check(cudaMemset(counters.get(), 0, sizeof(SummaryCounters)), "cudaMemset");
  summary_kernel<<<grid_size(n), kThreads>>>(reinterpret_cast<const std::uint32_t*>(x), n, counters.get());
  check(cudaGetLastError(), "summary_kernel launch");
  const SummaryCounters c = read_back(counters);
  InputSummary s;
  s.values = n;
  s.zero = c.zero;
  s.nan = c.nan;
  s.inf = c.inf;
  s.amax = std::bit_cast<float>(c.amax_bits);
  for (int b = 0; b < kBinades; ++b) {
    const auto at = static_cast<std::size_t>(b + kMinBinade - InputSummary::min_binade);
    s.binade_count[at] = c.binade[b];
    s.power_of_two_count[at] = c.power_of_two[b];
  }
  return s;
}

// The CPU's error scale for a conversion at `scale` (analysis.cpp, add_errors_in).
ErrorScale error_scale(float scale) {
  const double s = scale;
  return {s, s == std::ldexp(1.0, std::ilogb(s)), 1.0 / s};
}

ConversionStats measure(const ScaledConversion& c, const float* x, std::size_t n, bool errors) {
  check_gpu_target(c.format());
  const Measure m{Rounder(c.format(), c.policy()), RandomStream{c.seed(), 0}, is_stochastic(c.policy().rounding),
                  c.scale(), c.format(), errors};
  const DeviceBuffer<MeasureCounters> counters(1);
  check(cudaMemset(counters.get(), 0, sizeof(MeasureCounters)), "cudaMemset");
  measure_kernel<<<grid_size(n), kThreads>>>(m, error_scale(c.scale()), x, n, counters.get());
  check(cudaGetLastError(), "measure_kernel launch");
  const MeasureCounters t = read_back(counters);
  ConversionStats stats;
  stats.add(flag_counts(std::vector<unsigned long long>(t.flags, t.flags + kFlagCounters)));
  if (errors) {
    ValueErrors e;
    e.nan_in = t.counts[0];
    e.inf_in = t.counts[1];
    e.nonfinite_out = t.counts[2];
    e.overflow = t.counts[3];
    e.exact = t.counts[4];
    e.error_count = t.counts[5];
    e.rel_error_count = t.counts[6];
    e.max_abs_error = std::bit_cast<double>(t.max_abs_bits);
    e.max_rel_error = std::bit_cast<double>(t.max_rel_bits);
    e.sum_rel_error = t.sum_rel;
    e.sum_sq_rel_error = t.sum_sq_rel;
    stats.add(e);
  }
  return stats;
}

void measure_blocks(const BlockScaledConversion& c, const float* x, std::size_t n, BlockTotals& totals,
                    std::vector<BlockResult>* kept) {
  const Format& f = c.element();
  check_gpu_target(f);
  const std::size_t block = static_cast<std::size_t>(c.block()), blocks = (n + block - 1) / block;
  const Blocks b{Rounder(f, c.policy()), is_stochastic(c.policy().rounding), f, f.max_exponent(),
                 fmtcheck::to_double(f, f.to_storage(f.max_finite_code())), c.rule(), block};
  const DeviceBuffer<BlockOut> out(blocks);
  blocks_kernel<<<grid_size(blocks), kThreads>>>(b, x, n, out.get());
  check(cudaGetLastError(), "blocks_kernel launch");
  for (const BlockOut& o : out.to_host()) {
    BlockResult r{o.amax, o.scale_log2, {}};
    r.stats.add(flag_counts(std::vector<unsigned long long>(o.flags, o.flags + kFlagCounters)));
    r.stats.add(o.errors);
    totals.add(r);
    if (kept != nullptr) kept->push_back(r);
  }
}

}  // namespace

TensorAnalysis analyze_on_gpu(const float* values, std::size_t n, const AnalysisSettings& settings) {
  TensorPass pass;
  pass.count = n;
  pass.run = [&](const TensorPass::Request& request) {
    TensorPass::Result r;
    if (request.summary) r.summary = summarize(values, n);
    for (const ScaledConversion* c : request.measure) r.measured.push_back(measure(*c, values, n, true));
    for (const ScaledConversion* c : request.count_flags) r.counted.push_back(measure(*c, values, n, false));
    r.block_totals.resize(request.blocks.size());
    r.block_results.resize(request.keep_blocks ? request.blocks.size() : 0);
    for (std::size_t i = 0; i < request.blocks.size(); ++i) {
      measure_blocks(*request.blocks[i], values, n, r.block_totals[i],
                     request.keep_blocks ? &r.block_results[i] : nullptr);
    }
    return r;
  };
  return analyze_passes(pass, settings);
}

TensorAnalysis analyze_values_on_gpu(std::span<const float> values, const AnalysisSettings& settings) {
  const DeviceBuffer<float> device(values);
  return analyze_on_gpu(device.get(), values.size(), settings);
}

}  // namespace fmtcheck::cuda
