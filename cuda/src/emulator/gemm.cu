// gemm() on the GPU. The library plans the GEMM (detail::plan_gemm, as the
// CPU's gemm() does) and its kernel (gemm_kernel.hpp) runs here unchanged:
// one kernel decodes every operand into an integer significand and an
// alignment exponent, marking the lines that hold a NaN or an infinity;
// a second computes one output per thread. Outputs of marked lines, and
// every output of a model the kernel does not take, are computed by the
// CPU's gemm() from host copies: no second definition of the rare paths.
#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "../cuda_check.hpp"
#include "../device_buffer.hpp"
#include "fmtcheck/core/round_to_format.hpp"
#include "fmtcheck/cuda/emulated_gemm.hpp"
#include "fmtcheck/tensor_core/block_scaled_kernel.hpp"
#include "fmtcheck/tensor_core/gemm_kernel.hpp"

namespace fmtcheck::cuda {
namespace {

using detail::check;
using detail::DeviceBuffer;

// A decoded operand line from a chunk's start: element k at k * stride
// (rows of A: 1; columns of B, kept in B's K x N layout so that a warp's
// neighbouring columns read neighbouring words: N).
struct StridedLine {
  const std::int32_t* sigs;
  const std::int32_t* aligns;
  std::size_t stride;
  __device__ std::int32_t sig(std::size_t k) const { return sigs[k * stride]; }
  __device__ std::int32_t align(std::size_t k) const { return aligns[k * stride]; }
};

// How one matrix is decoded: bits of `input`, read as values of `read`
// (input itself, or fp16 for FP8 mma.sync: exact, as convert_bits is).
struct Decode {
  Encoding input;
  Encoding read;
  int max_align;  // a line with an element aligned above this is marked (plan_gemm)
};

// Decodes the `count` elements of A (M x K: lines are rows, e / k) or of
// B (K x N: lines are columns, e % n) and marks the lines that the CPU
// must finish.
template <class Code>
__global__ void decode_kernel(Decode d, const Code* bits, std::size_t count, std::size_t k,
                              bool lines_are_rows, std::size_t n, std::int32_t* sig, std::int32_t* align,
                              unsigned char* special_line) {
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  for (std::size_t e = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; e < count; e += stride) {
    std::uint64_t b = bits[e];
    if (!(d.read == d.input)) b = round_to_format(unpack(d.input, b), d.read, Policy{}).bits;  // exact
    bool special = false;
    const fmtcheck::detail::Operand o = fmtcheck::detail::decode_operand(d.read, b, special);
    sig[e] = o.sig;
    align[e] = o.align;
    // A's line is its row (e / k), B's its column (e % n).
    if (special || o.align > d.max_align) special_line[lines_are_rows ? e / k : e % n] = 1;
  }
}

// One output per thread (a warp: 32 neighbouring columns of one row), those
// of marked lines left to the CPU.
__global__ void gemm_kernel(fmtcheck::detail::GemmKernel kern, fmtcheck::detail::GemmPlan plan, std::size_t m,
                            std::size_t n, const std::int32_t* a_sig, const std::int32_t* a_align,
                            const std::int32_t* b_sig, const std::int32_t* b_align, const unsigned char* a_special,
                            const unsigned char* b_special, const float* c, float* d) {
  const std::size_t j = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (j >= n || b_special[j]) return;
  const std::size_t k = plan.k;
  for (std::size_t i = std::size_t{blockIdx.y} * blockDim.y + threadIdx.y; i < m;
       i += std::size_t{gridDim.y} * blockDim.y) {
    if (a_special[i]) continue;
    const auto tensor_core = [&](std::size_t k0, std::size_t k1) {
      const StridedLine row{a_sig + i * k + k0, a_align + i * k + k0, 1};
      const StridedLine col{b_sig + k0 * n + j, b_align + k0 * n + j, n};
      const std::uint32_t bits = kern.chunk(row, col, k1 - k0);
      return fmtcheck::detail::accumulator_value(kern.accumulator, bits);
    };
    d[i * n + j] = fmtcheck::detail::gemm_output(plan, tensor_core, c[i * n + j]);
  }
}

// The output kernels' geometry: a warp per 32 neighbouring columns of a row,
// 8 rows per block; rows beyond the grid's 65535 blocks loop.
const dim3 kOutputThreads(32, 8);
dim3 output_grid(std::size_t m, std::size_t n) {
  return {static_cast<unsigned>((n + 31) / 32), static_cast<unsigned>(std::min<std::size_t>((m + 7) / 8, 65535))};
}

int decode_grid(std::size_t count) {
  return static_cast<int>(std::clamp<std::size_t>((count + 255) / 256, 1, 65535));
}

template <class T>
std::vector<T> to_host(const T* device, std::size_t count) {
  std::vector<T> host(count);
  check(cudaMemcpy(host.data(), device, count * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy to host");
  return host;
}

// An operand's codes on the host, widened to 32 bits (what gemm() takes).
std::vector<std::uint32_t> to_host(DeviceCodes x, std::size_t count) {
  const auto widened = [](const auto& v) { return std::vector<std::uint32_t>(v.begin(), v.end()); };
  switch (x.bytes) {
    case 1: return widened(to_host(static_cast<const std::uint8_t*>(x.data), count));
    case 2: return widened(to_host(static_cast<const std::uint16_t*>(x.data), count));
    default: return to_host(static_cast<const std::uint32_t*>(x.data), count);
  }
}

void check_width(DeviceCodes x, const char* what) {
  if (x.bytes != 1 && x.bytes != 2 && x.bytes != 4) {
    throw std::invalid_argument(std::string("gemm: ") + what + " has " + std::to_string(x.bytes) +
                                "-byte elements; the GPU takes codes of 1, 2 or 4 bytes");
  }
}

// Decodes one operand, whatever its width.
void decode(Decode d, DeviceCodes x, std::size_t count, std::size_t k, bool lines_are_rows, std::size_t n,
            std::int32_t* sig, std::int32_t* align, unsigned char* special) {
  const int grid = decode_grid(count);
  switch (x.bytes) {
    case 1:
      decode_kernel<<<grid, 256>>>(d, static_cast<const std::uint8_t*>(x.data), count, k, lines_are_rows, n, sig,
                                   align, special);
      break;
    case 2:
      decode_kernel<<<grid, 256>>>(d, static_cast<const std::uint16_t*>(x.data), count, k, lines_are_rows, n, sig,
                                   align, special);
      break;
    default:
      decode_kernel<<<grid, 256>>>(d, static_cast<const std::uint32_t*>(x.data), count, k, lines_are_rows, n, sig,
                                   align, special);
  }
  check(cudaGetLastError(), "decode_kernel launch");
}

// The outputs of the marked rows and columns (all of them when `all`), by
// the CPU's gemm() on host copies, written into d.
std::size_t finish_on_cpu(const GemmConfig& config, std::size_t m, std::size_t n, std::size_t k,
                          DeviceCodes a, DeviceCodes b, const float* c, float* d,
                          const std::vector<unsigned char>& rows, const std::vector<unsigned char>& cols, bool all) {
  std::vector<std::size_t> marked_rows, marked_cols;
  for (std::size_t i = 0; i < m; ++i) {
    if (all || rows[i]) marked_rows.push_back(i);
  }
  for (std::size_t j = 0; j < n && !all; ++j) {
    if (cols[j]) marked_cols.push_back(j);
  }
  if (marked_rows.empty() && marked_cols.empty()) return 0;
  const std::vector<std::uint32_t> ha = to_host(a, m * k), hb = to_host(b, k * n);
  std::vector<float> hd = to_host(d, m * n);
  const std::vector<float> hc = c == d ? hd : to_host(c, m * n);
  std::size_t outputs = 0;
  if (!marked_rows.empty()) {  // those rows of A against all of B
    const std::size_t r = marked_rows.size();
    std::vector<std::uint32_t> sa(r * k);
    std::vector<float> sc(r * n), sd(r * n);
    for (std::size_t x = 0; x < r; ++x) {
      std::copy_n(ha.begin() + marked_rows[x] * k, k, sa.begin() + x * k);
      std::copy_n(hc.begin() + marked_rows[x] * n, n, sc.begin() + x * n);
    }
    gemm(config, r, n, k, sa, hb, sc, sd);
    for (std::size_t x = 0; x < r; ++x) std::copy_n(sd.begin() + x * n, n, hd.begin() + marked_rows[x] * n);
    outputs += r * n;
  }
  if (!marked_cols.empty()) {  // all of A against those columns of B
    const std::size_t q = marked_cols.size();
    std::vector<std::uint32_t> sb(k * q);
    std::vector<float> sc(m * q), sd(m * q);
    for (std::size_t kk = 0; kk < k; ++kk) {
      for (std::size_t y = 0; y < q; ++y) sb[kk * q + y] = hb[kk * n + marked_cols[y]];
    }
    for (std::size_t i = 0; i < m; ++i) {
      for (std::size_t y = 0; y < q; ++y) sc[i * q + y] = hc[i * n + marked_cols[y]];
    }
    gemm(config, m, q, k, ha, sb, sc, sd);
    for (std::size_t i = 0; i < m; ++i) {
      for (std::size_t y = 0; y < q; ++y) {
        hd[i * n + marked_cols[y]] = sd[i * q + y];
        outputs += rows[i] ? 0 : 1;  // counted with its row
      }
    }
  }
  check(cudaMemcpy(d, hd.data(), m * n * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy to device");
  return outputs;
}

// A decoded block-scaled line from an instruction's start, contiguous along k.
struct ScaledLine {
  const fmtcheck::detail::ScaledOperand* p;
  __device__ std::int32_t sig(std::size_t k) const { return p[k].sig; }
  __device__ std::int32_t lsb(std::size_t k) const { return p[k].lsb; }
  __device__ std::int32_t align(std::size_t k) const { return p[k].align; }
};

// Decodes `count` codes (elements, or scales when is_scale) of f; sets *special
// when one is a NaN or an infinity.
template <class Code>
__global__ void decode_scaled_kernel(Encoding f, bool is_scale, const Code* bits, std::size_t count,
                                     fmtcheck::detail::ScaledOperand* out, unsigned char* special) {
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  for (std::size_t e = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; e < count; e += stride) {
    bool s = false;
    out[e] = fmtcheck::detail::decode_scaled_operand(f, bits[e], is_scale, s);
    if (s) *special = 1;
  }
}

void decode_scaled(const Encoding& f, bool is_scale, DeviceCodes x, std::size_t count,
                   fmtcheck::detail::ScaledOperand* out, unsigned char* special) {
  const int grid = decode_grid(count);
  switch (x.bytes) {
    case 1:
      decode_scaled_kernel<<<grid, 256>>>(f, is_scale, static_cast<const std::uint8_t*>(x.data), count, out, special);
      break;
    case 2:
      decode_scaled_kernel<<<grid, 256>>>(f, is_scale, static_cast<const std::uint16_t*>(x.data), count, out, special);
      break;
    default:
      decode_scaled_kernel<<<grid, 256>>>(f, is_scale, static_cast<const std::uint32_t*>(x.data), count, out, special);
  }
  check(cudaGetLastError(), "decode_scaled_kernel launch");
}

// One output per thread: its chain of instructions along k.
__global__ void block_scaled_kernel(fmtcheck::detail::BlockScaledKernel kern, std::size_t m, std::size_t n,
                                    std::size_t k, std::size_t kk, const fmtcheck::detail::ScaledOperand* a,
                                    const fmtcheck::detail::ScaledOperand* b,
                                    const fmtcheck::detail::ScaledOperand* sa,
                                    const fmtcheck::detail::ScaledOperand* sb, float* d) {
  const std::size_t j = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (j >= n) return;
  const std::size_t scales = k / kern.scale_block, per = kk / kern.scale_block;
  for (std::size_t i = std::size_t{blockIdx.y} * blockDim.y + threadIdx.y; i < m;
       i += std::size_t{gridDim.y} * blockDim.y) {
    std::uint32_t c = 0;
    for (std::size_t q = 0; q < k / kk; ++q) {
      c = kern.instruction(ScaledLine{a + i * k + q * kk}, ScaledLine{b + j * k + q * kk},
                           ScaledLine{sa + i * scales + q * per}, ScaledLine{sb + j * scales + q * per}, kk, c);
    }
    d[i * n + j] = __uint_as_float(c);
  }
}

// All of a block-scaled GEMM by the CPU's gemm_block_scaled, from host copies.
std::size_t block_scaled_on_cpu(const BlockScaledGemmConfig& config, std::size_t m, std::size_t n, std::size_t k,
                                DeviceCodes a, DeviceCodes b, const std::uint8_t* scale_a,
                                const std::uint8_t* scale_b, float* d) {
  const std::size_t scales = k / config.scale_block;
  const std::vector<std::uint32_t> ha = to_host(a, m * k), hb = to_host(b, n * k);
  const std::vector<std::uint8_t> hsa = to_host(scale_a, m * scales), hsb = to_host(scale_b, n * scales);
  std::vector<float> hd(m * n);
  gemm_block_scaled(config, m, n, k, ha, hb, hsa, hsb, hd);
  check(cudaMemcpy(d, hd.data(), m * n * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy to device");
  return m * n;
}

}  // namespace

GpuGemmReport gemm_block_scaled_device_buffers(const BlockScaledGemmConfig& config, std::size_t m, std::size_t n,
                                               std::size_t k, DeviceCodes a, DeviceCodes b,
                                               const std::uint8_t* scale_a, const std::uint8_t* scale_b, float* d) {
  fmtcheck::detail::check_block_scaled_gemm(config, k);
  check_width(a, "A");
  check_width(b, "B");
  GpuGemmReport report{m * n, 0};
  if (m * n == 0) return report;
  if (!fmtcheck::detail::kernel_takes(config) || k == 0) {
    report.cpu_outputs = block_scaled_on_cpu(config, m, n, k, a, b, scale_a, scale_b, d);
    return report;
  }
  const std::size_t scales = k / config.scale_block;
  const DeviceBuffer<fmtcheck::detail::ScaledOperand> da(m * k), db(n * k), dsa(m * scales), dsb(n * scales);
  const DeviceBuffer<unsigned char> special(1);
  check(cudaMemset(special.get(), 0, 1), "cudaMemset");
  decode_scaled(config.input, false, a, m * k, da.get(), special.get());
  decode_scaled(config.input, false, b, n * k, db.get(), special.get());
  decode_scaled(config.scale_format, true, {scale_a, 1}, m * scales, dsa.get(), special.get());
  decode_scaled(config.scale_format, true, {scale_b, 1}, n * scales, dsb.get(), special.get());
  if (special.to_host()[0] != 0) {  // a NaN or an infinity somewhere: rare; the CPU does it all
    report.cpu_outputs = block_scaled_on_cpu(config, m, n, k, a, b, scale_a, scale_b, d);
    return report;
  }
  block_scaled_kernel<<<output_grid(m, n), kOutputThreads>>>(fmtcheck::detail::plan_block_scaled(config), m, n, k,
                                                              config.instruction_k, da.get(), db.get(), dsa.get(),
                                                              dsb.get(), d);
  check(cudaGetLastError(), "block_scaled_kernel launch");
  check(cudaDeviceSynchronize(), "block_scaled_kernel");
  return report;
}

GpuGemmReport gemm_block_scaled_on_gpu(const BlockScaledGemmConfig& config, std::size_t m, std::size_t n,
                                       std::size_t k, std::span<const std::uint32_t> a,
                                       std::span<const std::uint32_t> b, std::span<const std::uint8_t> scale_a,
                                       std::span<const std::uint8_t> scale_b, std::span<float> d) {
  fmtcheck::detail::check_block_scaled_gemm(config, k);
  const std::size_t scales = k / config.scale_block;
  if (a.size() != m * k || b.size() != n * k || scale_a.size() != m * scales || scale_b.size() != n * scales ||
      d.size() != m * n) {
    throw std::invalid_argument("gemm_block_scaled: matrix or scale sizes do not match M, N, K");
  }
  const DeviceBuffer<std::uint32_t> da(a), db(b);
  const DeviceBuffer<std::uint8_t> dsa(scale_a), dsb(scale_b);
  const DeviceBuffer<float> dd(m * n);
  const GpuGemmReport report = gemm_block_scaled_device_buffers(config, m, n, k, {da.get(), 4}, {db.get(), 4},
                                                                dsa.get(), dsb.get(), dd.get());
  const std::vector<float> host = dd.to_host();
  std::copy(host.begin(), host.end(), d.begin());
  return report;
}

GpuGemmReport gemm_device_buffers(const GemmConfig& config, std::size_t m, std::size_t n, std::size_t k,
                                  DeviceCodes a, DeviceCodes b, const float* c, float* d) {
  const fmtcheck::detail::GemmSetup setup = fmtcheck::detail::plan_gemm(config, k);
  check_width(a, "A");
  check_width(b, "B");
  GpuGemmReport report{m * n, 0};
  if (m * n == 0) return report;
  const std::vector<unsigned char> none;
  if (!setup.fast || k == 0) {
    // k == 0: D = fma(scale, 0, C) for every output, which the CPU does at once.
    report.cpu_outputs = finish_on_cpu(config, m, n, k, a, b, c, d, none, none, true);
    return report;
  }
  const Format& input_b = config.input_b ? *config.input_b : config.input;
  const DeviceBuffer<std::int32_t> a_sig(m * k), a_align(m * k), b_sig(k * n), b_align(k * n);
  const DeviceBuffer<unsigned char> a_special(m), b_special(n);
  check(cudaMemset(a_special.get(), 0, m), "cudaMemset");
  check(cudaMemset(b_special.get(), 0, n), "cudaMemset");
  decode(Decode{config.input, setup.read_a, setup.max_align}, a, m * k, k, true, n, a_sig.get(), a_align.get(),
         a_special.get());
  decode(Decode{input_b, setup.read_b, setup.max_align}, b, k * n, k, false, n, b_sig.get(), b_align.get(),
         b_special.get());
  gemm_kernel<<<output_grid(m, n), kOutputThreads>>>(setup.kernel, setup.plan, m, n, a_sig.get(), a_align.get(),
                                                      b_sig.get(), b_align.get(), a_special.get(), b_special.get(),
                                                      c, d);
  check(cudaGetLastError(), "gemm_kernel launch");
  check(cudaDeviceSynchronize(), "gemm_kernel");
  report.cpu_outputs = finish_on_cpu(config, m, n, k, a, b, c, d, a_special.to_host(), b_special.to_host(), false);
  return report;
}

GpuGemmReport gemm_on_gpu(const GemmConfig& config, std::size_t m, std::size_t n, std::size_t k,
                          std::span<const std::uint32_t> a, std::span<const std::uint32_t> b, std::span<const float> c,
                          std::span<float> d) {
  if (a.size() != m * k || b.size() != k * n || c.size() != m * n || d.size() != m * n) {
    throw std::invalid_argument("gemm: matrix sizes do not match M, N, K");
  }
  const DeviceBuffer<std::uint32_t> da(a), db(b);
  const DeviceBuffer<float> dc(c), dd(m * n);
  const GpuGemmReport report = gemm_device_buffers(config, m, n, k, {da.get(), 4}, {db.get(), 4}, dc.get(), dd.get());
  const std::vector<float> host = dd.to_host();
  std::copy(host.begin(), host.end(), d.begin());
  return report;
}

}  // namespace fmtcheck::cuda
