// The GPU emulator's exhaustive proof and its speed, on a GPU
// (cuda/run-hardware-comparison.sh --steps emulator):
//
//   cuda-emulator-sweep [FORMAT:ROUND:OVERFLOW:SUBNORMALS:NAN[:SR_BITS] ...]
//
// For each pair (a default list without arguments), every float32 input (2^32 bit patterns) is
// converted on the GPU and, independently, by the CPU's batch conversion on every core: the flag
// counts and an order-free digest of every (input, code) pair must be equal (stochastic modes draw
// from the same RandomStream, seed 1). Then the speed: a 1 GiB float32 buffer converted into e4m3
// and bf16 with flag counts, and as many e4m3 and bf16 codes decoded into float32, against a
// device-to-device copy of the same buffer, medians of 20.
// Exit 0 when every pair agrees, 1 otherwise, 77 without a GPU ("no GPU found: ...").
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "fmtcheck/batch/convert_batch.hpp"
#include "fmtcheck/core/policy_text.hpp"
#include "fmtcheck/cuda/emulated_convert.hpp"
#include "gpu_or_skip.hpp"

using namespace fmtcheck;

namespace {

constexpr std::uint64_t kSeed = 1;
constexpr std::size_t kChunk = std::size_t{1} << 22;

const char* const kDefaultPairs[] = {
    "fp16:rne:nosat:keep:ieee",      "fp16:rtz:nosat:keep:cuda",       "fp16:sr:nosat:keep:ieee:16",
    "bf16:rne:nosat:keep:torch",     "bf16:sr-rne:sat:keep:ieee:8",    "tf32:rna:nosat:keep:cuda",
    "e4m3:rne:sat:keep:cuda",        "e4m3:rne:nosat:keep:torch",      "e5m2:rne:satprop:ftz-daz:ieee",
    "e4m3fnuz:rne:nosat:keep:ieee",  "e5m2fnuz:rdn:nosat:keep:ieee",   "e2m3:rne:sat:keep:ieee",
    "e3m2:rto:sat:keep:ieee",        "e2m1:sr-rna:sat:keep:ieee:8",    "e8m0:rup:sat:keep:ieee",
    "binary8p3se:rne:nosat:keep:ieee", "binary8p4uf:rna:sat:keep:ieee", "e6m9:rup:nosat:ftz:ieee",
};

struct Pair {
  std::string text;
  Format format;
  Policy policy;
};

Pair parse(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream ss(text);
  for (std::string part; std::getline(ss, part, ':');) parts.push_back(part);
  if (parts.size() < 5 || parts.size() > 6) {
    throw std::invalid_argument("bad pair '" + text + "': expected FORMAT:ROUND:OVERFLOW:SUBNORMALS:NAN[:SR_BITS]");
  }
  PolicyText t;
  t.round = parts[1];
  t.overflow = parts[2];
  t.subnormals = parts[3];
  t.nan = parts[4];
  t.sr_bits = parts.size() == 6 ? std::stoi(parts[5]) : 0;
  return {text, format_from_string(parts[0]), policy_from_text(t)};
}

template <class Code>
void cpu_chunk(const Pair& pair, std::uint64_t first, std::vector<float>& in, std::vector<Code>& out, FlagCounts& flags,
               std::uint64_t& digest) {
  for (std::size_t i = 0; i < kChunk; ++i) in[i] = std::bit_cast<float>(static_cast<std::uint32_t>(first + i));
  flags += convert_batch(in, pair.format, pair.policy, std::span<Code>(out), RandomStream{kSeed, first});
  for (std::size_t i = 0; i < kChunk; ++i) {
    digest += cuda::sweep_digest_term(static_cast<std::uint32_t>(first + i), out[i]);
  }
}

// The CPU's sweep: chunks of the 2^32 inputs taken by every core in turn.
cuda::Sweep cpu_sweep(const Pair& pair) {
  std::atomic<std::uint64_t> next{0};
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<cuda::Sweep> parts(threads);
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      std::vector<float> in(kChunk);
      std::vector<std::uint8_t> out8(kChunk);
      std::vector<std::uint16_t> out16(kChunk);
      std::vector<std::uint32_t> out32(kChunk);
      for (std::uint64_t first; (first = next.fetch_add(kChunk)) < (std::uint64_t{1} << 32);) {
        switch (pair.format.storage_bits) {
          case 8: cpu_chunk(pair, first, in, out8, parts[t].flags, parts[t].digest); break;
          case 16: cpu_chunk(pair, first, in, out16, parts[t].flags, parts[t].digest); break;
          default: cpu_chunk(pair, first, in, out32, parts[t].flags, parts[t].digest); break;
        }
      }
    });
  }
  for (auto& th : pool) th.join();
  cuda::Sweep total;
  for (const auto& p : parts) {
    total.flags += p.flags;
    total.digest += p.digest;
  }
  return total;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Median milliseconds of 20 runs of f, timed with device events after 3 warm-ups.
template <class F>
double median_ms(F f) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  for (int i = 0; i < 3; ++i) f();
  std::vector<float> ms;
  for (int i = 0; i < 20; ++i) {
    cudaEventRecord(start);
    f();
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float t = 0;
    cudaEventElapsedTime(&t, start, stop);
    ms.push_back(t);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

void speed() {
  const std::size_t n = std::size_t{1} << 28;  // 1 GiB of float32
  float* in = nullptr;
  void* out = nullptr;
  void* copy = nullptr;
  if (cudaMalloc(&in, n * 4) != cudaSuccess || cudaMalloc(&out, n * 4) != cudaSuccess ||
      cudaMalloc(&copy, n * 4) != cudaSuccess) {
    std::printf("speed: not measured (cudaMalloc of 3 GiB failed)\n");
    return;
  }
  // Varied data: a ramp of float32 bit patterns over the normal range.
  std::vector<std::uint32_t> host(n);
  for (std::size_t i = 0; i < n; ++i) host[i] = 0x30000000u + static_cast<std::uint32_t>(i * 2654435761u % 0x1F000000u);
  cudaMemcpy(in, host.data(), n * 4, cudaMemcpyHostToDevice);
  const double copy_ms = median_ms([&] { cudaMemcpy(copy, in, n * 4, cudaMemcpyDeviceToDevice); });
  const double copy_gbs = 2.0 * n * 4 / copy_ms / 1e6;  // bytes read + written
  std::printf("%-30s %10s %12s %14s\n", "1 GiB float32 ->", "ms", "G values/s", "of copy GB/s");
  std::printf("%-30s %10.3f %12.1f %13.0f%%\n", "device-to-device copy", copy_ms, n / copy_ms / 1e6, 100.0);
  for (const char* text : {"e4m3:rne:sat:keep:cuda", "bf16:rne:nosat:keep:ieee", "e4m3:sr:sat:keep:ieee:16"}) {
    const Pair pair = parse(text);
    const double ms = median_ms([&] { cuda::convert_device_buffer(in, n, pair.format, pair.policy, out, kSeed); });
    const double gbs = (n * 4.0 + n * pair.format.storage_bits / 8.0) / ms / 1e6;
    std::printf("%-30s %10.3f %12.1f %13.0f%%\n", text, ms, n / ms / 1e6, 100.0 * gbs / copy_gbs);
  }
  // And back: the same number of codes decoded into float32.
  for (const char* name : {"e4m3", "bf16"}) {
    const Format f = format_from_string(name);
    cuda::convert_device_buffer(in, n, f, Policy{}, out);
    const double ms = median_ms([&] { cuda::decode_device_buffer(out, n, f, copy); });
    const double gbs = (n * f.storage_bits / 8.0 + n * 4.0) / ms / 1e6;
    const std::string text = std::string("decode ") + name + " -> float32";
    std::printf("%-30s %10.3f %12.1f %13.0f%%\n", text.c_str(), ms, n / ms / 1e6, 100.0 * gbs / copy_gbs);
  }
  cudaFree(in);
  cudaFree(out);
  cudaFree(copy);
}

}  // namespace

int main(int argc, char** argv) {
  exit_unless_a_gpu();
  std::vector<std::string> texts(argv + 1, argv + argc);
  if (texts.empty()) texts.assign(std::begin(kDefaultPairs), std::end(kDefaultPairs));
  int failed = 0;
  std::printf("%-34s %8s %8s %18s  %s\n", "format:policy (every float32)", "GPU s", "CPU s", "digest", "verdict");
  for (const std::string& text : texts) {
    const Pair pair = parse(text);
    auto start = std::chrono::steady_clock::now();
    const cuda::Sweep gpu = cuda::sweep_every_float32_on_gpu(pair.format, pair.policy, kSeed);
    const double gpu_s = seconds_since(start);
    start = std::chrono::steady_clock::now();
    const cuda::Sweep cpu = cpu_sweep(pair);
    const double cpu_s = seconds_since(start);
    const bool agree = gpu.digest == cpu.digest && gpu.flags.values == cpu.flags.values &&
                       gpu.flags.count == cpu.flags.count && gpu.flags.values == (std::uint64_t{1} << 32);
    failed += agree ? 0 : 1;
    std::printf("%-34s %8.3f %8.2f %18llx  %s\n", text.c_str(), gpu_s, cpu_s,
                static_cast<unsigned long long>(gpu.digest), agree ? "equal" : "DIFFERENT");
  }
  speed();
  if (failed) {
    std::printf("FAIL: %d pairs differ between the GPU and the CPU\n", failed);
    return 1;
  }
  std::printf("PASS: every pair equal on all 2^32 float32 inputs, codes and flag counts\n");
  return 0;
}
