// On a GPU: the emulated GEMM computed there (cuda/src/emulator/gemm.cu)
// equals the CPU's gemm() bit for bit, for every tensor-core preset and every
// input type it takes, on random finite codes, powers of two across each
// format's range, and operands with NaN and infinity; with fp16 accumulators,
// promotion, split-K, scales and mixed E4M3 x E5M2 operands; the block-scaled
// (MX, NVFP4) GEMM for every kind; and the committed cuBLASLt GEMMs of
// docs/hardware replay on the GPU as on the CPU.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "committed_gemm_cases.hpp"
#include "fmtcheck/core/decode.hpp"
#include "fmtcheck/core/format.hpp"
#include "fmtcheck/cuda/blaslt_gemm.hpp"
#include "fmtcheck/cuda/emulated_gemm.hpp"
#include "fmtcheck/cuda/gemm_case_file.hpp"
#include "fmtcheck/tensor_core/gemm.hpp"

using namespace fmtcheck;

namespace {

constexpr std::size_t M = 24, N = 40, K = 96;

enum class Operands { random, powers_of_two, specials };

// A random finite code of f below 2^60 in magnitude (others drawn again, so
// that CDNA3 keeps every line on the GPU), as container bits.
std::uint32_t finite_code(const Format& f, std::mt19937& rng) {
  for (;;) {
    const std::uint64_t bits = f.to_storage(rng() & f.code_mask());
    const double x = to_double(f, bits);
    if (std::isfinite(x) && std::fabs(x) < 0x1p60) return static_cast<std::uint32_t>(bits);
  }
}

// +-2^e for e across f's normal range (its lowest binade's power where
// e is below it), as container bits.
std::uint32_t power_of_two(const Format& f, std::mt19937& rng) {
  const int e = f.min_exponent() + static_cast<int>(rng() % (f.max_exponent() - f.min_exponent() + 1));
  const std::uint64_t field = static_cast<std::uint64_t>(e + f.bias);
  const std::uint64_t sign = (rng() & 1) ? f.sign_bit() : 0;
  return static_cast<std::uint32_t>(f.to_storage(sign | (field << f.mantissa_bits)));
}

std::vector<std::uint32_t> matrix(const Format& f, std::size_t count, Operands kind, std::mt19937& rng) {
  std::vector<std::uint32_t> v(count);
  for (auto& x : v) x = kind == Operands::powers_of_two ? power_of_two(f, rng) : finite_code(f, rng);
  return v;
}

// The largest code of f that is infinite or NaN (0 when it has neither).
std::uint32_t special_code(const Format& f) {
  if (f.has_inf()) return static_cast<std::uint32_t>(f.to_storage(f.infinity_code()));
  if (f.has_nan()) return static_cast<std::uint32_t>(f.to_storage(f.specials == Specials::fnuz ? f.sign_bit()
                                                                                               : f.magnitude_mask()));
  return 0;
}

struct Result {
  std::size_t differ = 0;
  cuda::GpuGemmReport report;
};

Result compare(const GemmConfig& config, Operands kind, std::uint32_t seed) {
  std::mt19937 rng(seed);
  const Format& fb = config.input_b ? *config.input_b : config.input;
  std::vector<std::uint32_t> a = matrix(config.input, M * K, kind, rng);
  std::vector<std::uint32_t> b = matrix(fb, K * N, kind, rng);
  if (kind == Operands::specials) {  // one NaN or infinity in row 3 of A and in column 5 of B
    a[3 * K + 10] = special_code(config.input);
    b[20 * N + 5] = special_code(fb);
  }
  std::vector<float> c(M * N);
  for (auto& x : c) x = static_cast<float>(static_cast<int>(rng() % 64) - 32) * 0.125f;
  std::vector<float> cpu(M * N), gpu(M * N);
  gemm(config, M, N, K, a, b, c, cpu);
  Result r;
  r.report = cuda::gemm_on_gpu(config, M, N, K, a, b, c, gpu);
  for (std::size_t i = 0; i < cpu.size(); ++i) r.differ += std::bit_cast<std::uint32_t>(cpu[i]) != std::bit_cast<std::uint32_t>(gpu[i]);
  return r;
}

// The inputs a preset takes; the non-hardware models, a few of everything.
std::vector<Format> inputs_of(const TensorCoreModel& model) {
  std::vector<Format> out;
  if (model.takes_any_format()) {
    for (const char* name : {"fp16", "bf16", "e4m3", "e2m1", "binary8p3se"}) out.push_back(*parse_format(name));
  } else {
    for (const auto& e : model.entries) out.push_back(*parse_format(e.input));
  }
  return out;
}

}  // namespace

TEST_CASE("the GPU's emulated GEMM equals the CPU's for every preset and input type") {
  std::size_t gemms = 0, gpu_outputs = 0;
  for (const TensorCoreModel& model : tensor_core_models()) {
    for (const Format& input : inputs_of(model)) {
      CAPTURE(model.name);
      CAPTURE(input.name);
      GemmConfig config;
      config.model = model.arithmetic_for(input);
      config.input = input;
      // Every preset and format runs on the GPU (exact alignment in a 640-bit integer).
      const bool on_gpu = true;
      for (const Operands kind : {Operands::random, Operands::powers_of_two, Operands::specials}) {
        const int operands = static_cast<int>(kind);
        CAPTURE(operands);
        const Result r = compare(config, kind, 11 + static_cast<std::uint32_t>(gemms));
        CHECK(r.differ == 0);
        if (kind == Operands::random) CHECK(r.report.cpu_outputs == (on_gpu ? 0 : M * N));
        if (kind == Operands::specials && on_gpu && special_code(input) != 0) {
          CHECK(r.report.cpu_outputs == N + M - 1);  // row 3 and column 5
        }
        gpu_outputs += r.report.outputs - r.report.cpu_outputs;
        ++gemms;
      }
      // Promotion every 32, three slices of K, per-tensor scales.
      GemmConfig promoted = config;
      promoted.promote_every = 32;
      promoted.split_k = 3;
      promoted.scale_a = 0.5f;
      promoted.scale_b = 3.0f;
      CHECK(compare(promoted, Operands::random, 5).differ == 0);
      // An fp16 accumulator (mma.sync ... .f16), where the model writes one.
      if (config.model.writes_fp16) {
        GemmConfig half = config;
        half.accumulator = formats::fp16;
        CHECK(compare(half, Operands::random, 6).differ == 0);
        CHECK(compare(half, Operands::powers_of_two, 7).differ == 0);
      }
      gemms += 2;
    }
    // E4M3 x E5M2 (FP8 backward passes) where the model takes both.
    if (!model.takes_any_format() && model.for_inputs(formats::e4m3, formats::e5m2)) {
      GemmConfig mixed;
      mixed.model = *model.for_inputs(formats::e4m3, formats::e5m2);
      mixed.input = formats::e4m3;
      mixed.input_b = formats::e5m2;
      CAPTURE(model.name);
      CHECK(compare(mixed, Operands::random, 8).differ == 0);
      ++gemms;
    }
  }
  MESSAGE(gemms << " GEMMs of " << M << "x" << N << "x" << K << " compared; " << gpu_outputs
                << " outputs computed by the GPU's kernel");
  CHECK(gemms > 100);
}

TEST_CASE("the GPU's block-scaled GEMM equals the CPU's for every kind, element and scale format") {
  struct Kind {
    BlockScaledModel model;
    const char* element;
    Format scale;
    std::size_t scale_block, instruction_k;
  };
  const Kind kinds[] = {{blackwell_mxf8f6f4, "e4m3", formats::e8m0, 32, 32}, {blackwell_mxf8f6f4, "e5m2", formats::e8m0, 32, 32},
                        {blackwell_mxf8f6f4, "e2m3", formats::e8m0, 32, 32}, {blackwell_mxf8f6f4, "e3m2", formats::e8m0, 32, 32},
                        {blackwell_mxf8f6f4, "e2m1", formats::e8m0, 32, 32}, {blackwell_mxf4, "e2m1", formats::e8m0, 32, 64},
                        {blackwell_mxf4, "e2m1", formats::e4m3, 16, 64}};
  std::mt19937 rng(99);
  for (const Kind& kind : kinds) {
    BlockScaledGemmConfig g;
    g.model = kind.model;
    g.input = *parse_format(kind.element);
    g.scale_format = kind.scale;
    g.scale_block = kind.scale_block;
    g.instruction_k = kind.instruction_k;
    CAPTURE(kind.element);
    CAPTURE(kind.scale.name);
    const std::size_t m = 20, n = 36, k = 128, scales = k / g.scale_block;
    const std::vector<std::uint32_t> a = matrix(g.input, m * k, Operands::random, rng),
                                     b = matrix(g.input, n * k, Operands::random, rng);
    std::vector<std::uint8_t> sa(m * scales), sb(n * scales);
    for (auto* s : {&sa, &sb}) {  // scales near 2^0 (E8M0) or any finite UE4M3 code, zero and negative included
      for (auto& x : *s) {
        x = static_cast<std::uint8_t>(kind.scale == formats::e8m0 ? 117 + rng() % 21 : rng() % 256);
        if (kind.scale == formats::e4m3 && (x & 0x7F) == 0x7F) x = 0x7E;  // not the NaN
      }
    }
    std::vector<float> cpu(m * n), gpu(m * n);
    gemm_block_scaled(g, m, n, k, a, b, sa, sb, cpu);
    CHECK(cuda::gemm_block_scaled_on_gpu(g, m, n, k, a, b, sa, sb, gpu).cpu_outputs == 0);
    CHECK(std::memcmp(cpu.data(), gpu.data(), cpu.size() * sizeof(float)) == 0);
    // A NaN scale: the CPU computes all of it, with the same bits.
    sa[0] = kind.scale == formats::e8m0 ? 0xFF : 0x7F;
    gemm_block_scaled(g, m, n, k, a, b, sa, sb, cpu);
    CHECK(cuda::gemm_block_scaled_on_gpu(g, m, n, k, a, b, sa, sb, gpu).cpu_outputs == m * n);
    CHECK(std::memcmp(cpu.data(), gpu.data(), cpu.size() * sizeof(float)) == 0);
  }
}

TEST_CASE("the committed cuBLASLt GEMMs replay on the GPU's emulated GEMM as on the CPU's") {
  std::size_t files = 0;
  for (const auto& [path, c] : committed_gemm_cases(source_path("docs/hardware"))) {
    CAPTURE(path.string());
    const DotModel model = *find_tensor_core_model(c.model)->for_input(*c.gemm.input);
    const std::vector<std::uint32_t> d = cuda::emulate_blaslt_gemm(c.gemm, model, c.promote_every, c.x, true);
    CHECK(d == c.d);  // the hardware's own bits
    ++files;
  }
  CHECK(files >= 8);
}

TEST_CASE("the GPU's emulated GEMM refuses what gemm() refuses, in its words") {
  GemmConfig config;
  config.model = tensor_core_model("hopper").arithmetic_for(formats::e4m3);
  config.split_k = 0;
  const std::vector<std::uint32_t> a(4), b(4);
  const std::vector<float> c(4);
  std::vector<float> d(4);
  CHECK_THROWS_WITH_AS(cuda::gemm_on_gpu(config, 2, 2, 2, a, b, c, d), "gemm: split_k must be at least 1",
                       std::invalid_argument);
  config.split_k = 1;
  CHECK_THROWS_WITH_AS(cuda::gemm_on_gpu(config, 2, 2, 3, a, b, c, d), "gemm: matrix sizes do not match M, N, K",
                       std::invalid_argument);
}
