// Emulated tensor-core GEMM throughput: fused products per second (one
// product = one a*b term of a block) under the Hopper models and Blackwell's
// MX instruction, against the cost of the references they are checked against.
#include <benchmark/benchmark.h>

#include <bit>
#include <random>
#include <span>
#include <vector>

#include "fmtcheck/tensor_core/gemm.hpp"
#include "fmtcheck/tensor_core/tensor_core.hpp"

namespace {

using namespace fmtcheck;

// Random codes with the top exponent bit clear: magnitudes below 2, no NaN,
// no infinity, no overflow; zeros and subnormals included.
std::vector<std::uint32_t> random_bits(const Format& f, std::size_t count) {
  std::mt19937 rng(1);
  const std::uint32_t top_exponent_bit = 1u << (f.mantissa_bits + f.exponent_bits - 1);
  std::vector<std::uint32_t> out(count);
  for (auto& v : out) {
    v = static_cast<std::uint32_t>(f.to_storage((rng() & ((1u << f.width()) - 1)) & ~top_exponent_bit));
  }
  return out;
}

// threads = 0: every hardware thread; 1 gives the per-core rate.
void gemm_square(benchmark::State& state, const char* model, const Format& input, std::size_t promote,
                 unsigned threads = 0, const Format& accumulator = formats::fp32) {
  const auto n = static_cast<std::size_t>(state.range(0));
  GemmConfig g;
  g.model = *find_tensor_core_model(model)->for_input(input);
  g.input = input;
  g.promote_every = promote;
  g.threads = threads;
  g.accumulator = accumulator;
  const auto a = random_bits(input, n * n), b = random_bits(input, n * n);
  std::vector<float> c(n * n, 0.0f), d(n * n);
  for (auto _ : state) {
    gemm(g, n, n, n, a, b, c, d);
    benchmark::DoNotOptimize(d.data());
  }
  state.counters["products/s"] =
      benchmark::Counter(static_cast<double>(n * n * n), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_gemm_hopper_e4m3(benchmark::State& s) { gemm_square(s, "hopper-wgmma", formats::e4m3, 0); }
void BM_gemm_hopper_e4m3_promote128(benchmark::State& s) { gemm_square(s, "hopper-wgmma", formats::e4m3, 128); }
void BM_gemm_hopper_bf16(benchmark::State& s) { gemm_square(s, "hopper", formats::bf16, 0); }
// tf32: blocks of 8 products on Hopper, 4 on Ampere, one thread beside bf16's blocks of 16.
void BM_gemm_hopper_tf32_one_thread(benchmark::State& s) { gemm_square(s, "hopper-wgmma", formats::tf32, 0, 1); }
void BM_gemm_hopper_bf16_one_thread(benchmark::State& s) { gemm_square(s, "hopper-wgmma", formats::bf16, 0, 1); }
void BM_gemm_ampere_tf32_one_thread(benchmark::State& s) { gemm_square(s, "ampere", formats::tf32, 0, 1); }
void BM_gemm_hopper_e4m3_one_thread(benchmark::State& s) { gemm_square(s, "hopper-wgmma", formats::e4m3, 0, 1); }
void BM_gemm_hopper_fp16_fp16_accumulator(benchmark::State& s) {
  gemm_square(s, "hopper", formats::fp16, 0, 0, formats::fp16);
}
BENCHMARK(BM_gemm_hopper_e4m3_one_thread)->Arg(512)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_gemm_hopper_fp16_fp16_accumulator)->Arg(256)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_gemm_hopper_e4m3)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_gemm_hopper_e4m3_promote128)->Arg(256)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_gemm_hopper_bf16)->Arg(256)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_gemm_hopper_tf32_one_thread)->Arg(256)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_gemm_hopper_bf16_one_thread)->Arg(256)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_gemm_ampere_tf32_one_thread)->Arg(256)->Unit(benchmark::kMillisecond)->UseRealTime();

// One token through GPT-2's MLP weight (1 x 768 by 768 x 3072, B as N x K as
// torch's Linear holds it), bf16 under Hopper: decoding the weight costs as
// much as its products here, as in generation a token at a time.
void BM_gemm_tn_one_row_bf16(benchmark::State& state) {
  const std::size_t k = 768, n = 3072;
  GemmConfig g;
  g.model = *find_tensor_core_model("hopper")->for_input(formats::bf16);
  g.input = formats::bf16;
  const auto a = random_bits(formats::bf16, k), b = random_bits(formats::bf16, n * k);
  std::vector<float> c(n, 0.0f), d(n);
  for (auto _ : state) {
    gemm_tn(g, 1, n, k, a, b, c, d);
    benchmark::DoNotOptimize(d.data());
  }
  state.counters["products/s"] =
      benchmark::Counter(static_cast<double>(n * k), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_gemm_tn_one_row_bf16)->Unit(benchmark::kMillisecond)->UseRealTime();

// The structures that are not one fused block (FP8 mma.sync through fp16
// blocks, AMD CDNA3 and CDNA2), beside the fused kernel on the same size, one
// thread each.
void BM_gemm_fused_e4m3_one_thread(benchmark::State& s) { gemm_square(s, "hopper-wgmma", formats::e4m3, 0, 1); }
void BM_gemm_fp16_groups_e4m3_one_thread(benchmark::State& s) { gemm_square(s, "hopper", formats::e4m3, 0, 1); }
void BM_gemm_mi300x_fp16_one_thread(benchmark::State& s) { gemm_square(s, "mi300x", formats::fp16, 0, 1); }
void BM_gemm_mi250_fp16_one_thread(benchmark::State& s) { gemm_square(s, "mi250", formats::fp16, 0, 1); }
BENCHMARK(BM_gemm_fused_e4m3_one_thread)->Arg(128)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_gemm_fp16_groups_e4m3_one_thread)->Arg(128)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_gemm_mi300x_fp16_one_thread)->Arg(128)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_gemm_mi250_fp16_one_thread)->Arg(128)->Unit(benchmark::kMillisecond)->UseRealTime();

// MX (kind::mxf8f6f4: e4m3 and E8M0 scales per 32) at M = N = 128, K = 256,
// one thread: gemm_block_scaled, and the loop it replaced in the training
// emulator, block_scaled_dot_product_add per output and instruction.
constexpr std::size_t mx_m = 128, mx_k = 256, mx_block = 32;

struct MxOperands {
  std::vector<std::uint32_t> a = random_bits(formats::e4m3, mx_m * mx_k);
  std::vector<std::uint32_t> b = random_bits(formats::e4m3, mx_m * mx_k);
  std::vector<std::uint8_t> sa = scales(1), sb = scales(2);

  // Powers of two from 2^-8 to 2^8.
  static std::vector<std::uint8_t> scales(unsigned seed) {
    std::mt19937 rng(seed);
    std::vector<std::uint8_t> out(mx_m * mx_k / mx_block);
    for (auto& s : out) s = static_cast<std::uint8_t>(127 - 8 + rng() % 17);
    return out;
  }
};

void mx_products_per_second(benchmark::State& state) {
  state.counters["products/s"] =
      benchmark::Counter(static_cast<double>(mx_m * mx_m * mx_k), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_gemm_block_scaled_e4m3_one_thread(benchmark::State& state) {
  const MxOperands x;
  BlockScaledGemmConfig g;  // blackwell_mxf8f6f4, e4m3, e8m0 per 32, K = 32
  g.threads = 1;
  std::vector<float> d(mx_m * mx_m);
  for (auto _ : state) {
    gemm_block_scaled(g, mx_m, mx_m, mx_k, x.a, x.b, x.sa, x.sb, d);
    benchmark::DoNotOptimize(d.data());
  }
  mx_products_per_second(state);
}

void BM_block_scaled_per_instruction_e4m3(benchmark::State& state) {
  const MxOperands x;
  const std::vector<std::uint64_t> a(x.a.begin(), x.a.end()), b(x.b.begin(), x.b.end());
  const std::vector<std::uint64_t> sa(x.sa.begin(), x.sa.end()), sb(x.sb.begin(), x.sb.end());
  const std::size_t blocks = mx_k / mx_block;
  std::vector<float> d(mx_m * mx_m);
  for (auto _ : state) {
    for (std::size_t i = 0; i < mx_m; ++i) {
      for (std::size_t j = 0; j < mx_m; ++j) {
        std::uint64_t c = 0;
        for (std::size_t q = 0; q < blocks; ++q) {
          c = block_scaled_dot_product_add(blackwell_mxf8f6f4, formats::e4m3,
                                           std::span(a).subspan(i * mx_k + q * mx_block, mx_block),
                                           std::span(b).subspan(j * mx_k + q * mx_block, mx_block), formats::e8m0,
                                           std::span(sa).subspan(i * blocks + q, 1),
                                           std::span(sb).subspan(j * blocks + q, 1), c)
                  .bits;
        }
        d[i * mx_m + j] = std::bit_cast<float>(static_cast<std::uint32_t>(c));
      }
    }
    benchmark::DoNotOptimize(d.data());
  }
  mx_products_per_second(state);
}
BENCHMARK(BM_gemm_block_scaled_e4m3_one_thread)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_block_scaled_per_instruction_e4m3)->Unit(benchmark::kMillisecond)->UseRealTime();

// The reference path: one 32-long FP8 dot product through dot_product_add.
void BM_reference_dot_e4m3(benchmark::State& state) {
  const DotModel m = *find_tensor_core_model("hopper-wgmma")->for_input(formats::e4m3);
  const auto bits = random_bits(formats::e4m3, 64);
  const std::vector<std::uint64_t> a(bits.begin(), bits.begin() + 32), b(bits.begin() + 32, bits.end());
  for (auto _ : state) benchmark::DoNotOptimize(dot_product_add(m, formats::e4m3, a, b, 0, formats::fp32));
  state.counters["products/s"] = benchmark::Counter(32, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_reference_dot_e4m3);

}  // namespace
