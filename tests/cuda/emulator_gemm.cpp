// The GPU's emulated GEMM: its speed for every tensor-core preset, on a GPU
// (cuda/run-hardware-comparison.sh --steps emulator):
//
//   cuda-emulator-gemm [SIZE]
//
// For each hardware preset and each input type it takes, an emulated GEMM of
// SIZE^3 (default 1024) random finite operands runs on the GPU (device
// buffers, medians of 5 after a warm-up; the block-scaled MX and NVFP4 rows
// end to end, their operands copied in) and on one CPU core (threads = 1,
// on SIZE/8 rows: the same products per output), and the two outputs of
// those rows must be equal bit for bit. The table gives products per second
// on each and their ratio (the goal: 100 times one core); then
// the hardware's own cuBLASLt GEMM of the same fp16, bf16, tf32 and e4m3
// operands, end to end (operands copied to the device and D back) beside
// the emulated GEMM's, end to end too. Exit 0 when every output agrees, 1
// otherwise, 77 without a GPU ("no GPU found: ...").
#include <cuda_runtime.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "fmtcheck/core/decode.hpp"
#include "fmtcheck/cuda/blaslt_gemm.hpp"
#include "fmtcheck/cuda/emulated_gemm.hpp"
#include "fmtcheck/tensor_core/gemm.hpp"
#include "gpu_or_skip.hpp"

using namespace fmtcheck;

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Median seconds of 5 runs of f after one warm-up.
template <class F>
double median_s(F f) {
  f();
  std::vector<double> s;
  for (int i = 0; i < 5; ++i) {
    const auto start = std::chrono::steady_clock::now();
    f();
    s.push_back(seconds_since(start));
  }
  std::sort(s.begin(), s.end());
  return s[s.size() / 2];
}

// Random finite codes of f below 2^60 in magnitude, as container bits.
std::vector<std::uint32_t> operands(const Format& f, std::size_t count, std::mt19937& rng) {
  std::vector<std::uint32_t> v(count);
  for (auto& x : v) {
    for (;;) {
      const std::uint64_t bits = f.to_storage(rng() & f.code_mask());
      const double value = to_double(f, bits);
      if (std::isfinite(value) && std::fabs(value) < 0x1p60) {
        x = static_cast<std::uint32_t>(bits);
        break;
      }
    }
  }
  return v;
}

template <class T>
T* device_copy(const std::vector<T>& host) {
  T* p = nullptr;
  cudaMalloc(&p, host.size() * sizeof(T));
  cudaMemcpy(p, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice);
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  exit_unless_a_gpu();
  const std::size_t n = argc > 1 ? std::stoul(argv[1]) : 1024;
  const std::size_t rows = std::max<std::size_t>(n / 8, 1);
  const double products = static_cast<double>(n) * n * n;
  int differ = 0;
  std::mt19937 rng(2026);
  std::printf("%-20s %-9s %10s %10s %10s %8s  %s\n", "emulated GEMM", "input", "GPU ms", "G prod/s",
              "core G/s", "x core", "rows equal");
  for (const TensorCoreModel& model : tensor_core_models()) {
    if (model.takes_any_format()) continue;
    for (const auto& entry : model.entries) {
      const Format input = *parse_format(entry.input);
      GemmConfig config;
      config.model = entry.dot;
      config.input = input;
      const std::vector<std::uint32_t> a = operands(input, n * n, rng), b = operands(input, n * n, rng);
      const std::vector<float> c(n * n, 0.0f);
      std::uint32_t *da = device_copy(a), *db = device_copy(b);
      float *dc = device_copy(c), *dd = nullptr;
      cudaMalloc(&dd, n * n * sizeof(float));
      cuda::GpuGemmReport report;
      const double gpu_s = median_s([&] {
        report = cuda::gemm_device_buffers(config, n, n, n, {da, 4}, {db, 4}, dc, dd);
      });
      std::vector<float> gpu(n * n);
      cudaMemcpy(gpu.data(), dd, gpu.size() * sizeof(float), cudaMemcpyDeviceToHost);
      // One core on the first `rows` rows: the same work per output.
      GemmConfig one = config;
      one.threads = 1;
      std::vector<float> cpu(rows * n);
      const auto start = std::chrono::steady_clock::now();
      gemm(one, rows, n, n, std::span(a).first(rows * n), b, std::span(c).first(rows * n), cpu);
      const double cpu_s = seconds_since(start);
      bool equal = report.cpu_outputs == 0;
      for (std::size_t i = 0; i < cpu.size(); ++i) equal &= std::bit_cast<std::uint32_t>(cpu[i]) == std::bit_cast<std::uint32_t>(gpu[i]);
      differ += equal ? 0 : 1;
      const double gpu_rate = products / gpu_s / 1e9, cpu_rate = products * rows / n / cpu_s / 1e9;
      std::printf("%-20s %-9s %10.2f %10.1f %10.3f %8.0f  %s\n", model.name.c_str(), input.name.c_str(), gpu_s * 1e3,
                  gpu_rate, cpu_rate, gpu_rate / cpu_rate, equal ? "yes" : "NO");
      cudaFree(da);
      cudaFree(db);
      cudaFree(dc);
      cudaFree(dd);
    }
  }

  // The block-scaled instructions (MX, NVFP4) on e4m3 and e2m1 elements.
  for (const auto& [model, element, scale, block, kk] :
       {std::tuple{blackwell_mxf8f6f4, "e4m3", formats::e8m0, 32, 32}, std::tuple{blackwell_mxf4, "e2m1", formats::e4m3, 16, 64}}) {
    BlockScaledGemmConfig config;
    config.model = model;
    config.input = *parse_format(element);
    config.scale_format = scale;
    config.scale_block = static_cast<std::size_t>(block);
    config.instruction_k = static_cast<std::size_t>(kk);
    const std::size_t scales = n / config.scale_block;
    const std::vector<std::uint32_t> a = operands(config.input, n * n, rng), b = operands(config.input, n * n, rng);
    std::vector<std::uint8_t> sa(n * scales), sb(n * scales);
    for (auto* s : {&sa, &sb}) {
      for (auto& x : *s) x = static_cast<std::uint8_t>(scale == formats::e8m0 ? 117 + rng() % 21 : 0x30 + rng() % 16);
    }
    std::vector<float> gpu(n * n), cpu(rows * n);
    const double gpu_s = median_s([&] { (void)cuda::gemm_block_scaled_on_gpu(config, n, n, n, a, b, sa, sb, gpu); });
    BlockScaledGemmConfig one = config;
    one.threads = 1;
    const auto start = std::chrono::steady_clock::now();
    gemm_block_scaled(one, rows, n, n, std::span(a).first(rows * n), b, std::span(sa).first(rows * scales), sb, cpu);
    const double cpu_s = seconds_since(start);
    const bool equal = std::equal(cpu.begin(), cpu.end(), gpu.begin(), [](float x, float y) {
      return std::bit_cast<std::uint32_t>(x) == std::bit_cast<std::uint32_t>(y);
    });
    differ += equal ? 0 : 1;
    const double gpu_rate = products / gpu_s / 1e9, cpu_rate = products * rows / n / cpu_s / 1e9;
    std::printf("%-20s %-9s %10.2f %10.1f %10.3f %8.0f  %s\n", element == std::string("e4m3") ? "blackwell mxf8f6f4"
                                                                                           : "blackwell mxf4",
                element, gpu_s * 1e3, gpu_rate, cpu_rate, gpu_rate / cpu_rate, equal ? "yes" : "NO");
  }

  // The hardware's own GEMM of the same shape, end to end, beside the
  // emulated one end to end (both copy the operands in and D out).
  std::printf("\n%-12s %16s %16s %10s\n", "cuBLASLt", "hardware ms", "emulated ms", "emulated/hw");
  for (const Format* input : {&formats::fp16, &formats::bf16, &formats::tf32, &formats::e4m3}) {
    cuda::BlasLtGemm g;
    g.input = input;
    const cuda::GemmOperands x = cuda::make_gemm_operands(g, n, n, n, 7);
    try {
      const double hw_s = median_s([&] { (void)cuda::run_blaslt_gemm(g, x); });
      const DotModel model = tensor_core_model("hopper-wgmma").arithmetic_for(*input);
      const double emu_s = median_s([&] { (void)cuda::emulate_blaslt_gemm(g, model, 0, x, true); });
      std::printf("%-12s %16.2f %16.2f %10.1f\n", input->name.c_str(), hw_s * 1e3, emu_s * 1e3, emu_s / hw_s);
    } catch (const std::exception& e) {
      std::printf("%-12s not measured: %s\n", input->name.c_str(), e.what());
    }
  }
  if (differ) {
    std::printf("FAIL: %d GEMMs differ between the GPU and one CPU core (or left outputs to the CPU)\n", differ);
    return 1;
  }
  std::printf("PASS: every emulated GEMM equal on the GPU and the CPU; the ratios above are its speed\n");
  return 0;
}
