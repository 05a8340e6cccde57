// Batch conversion of 2^24 float32 values, beside the references measured in
// the same run: memcpy of the same input (the memory limit) and the CPU's own
// F16C instruction (the hardware limit for fp32 -> fp16). Read results as
// ratios to those, never as absolute numbers: these machines are noisy.
#include <benchmark/benchmark.h>
#include <immintrin.h>

#include <sys/mman.h>

#include <bit>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "fmtcheck/batch/convert_batch.hpp"
#include "fmtcheck/batch/convert_parallel.hpp"
#include "fmtcheck/batch/decode_batch.hpp"
#include "fmtcheck/core/convert.hpp"
#include "fmtcheck/core/decode.hpp"
#include "fmtcheck/core/unpacked.hpp"

namespace {

using namespace fmtcheck;

constexpr std::size_t kCount = std::size_t{1} << 24;

// Normally distributed values of varied scale, as in real tensors, with a
// sprinkling of subnormals, overflows, infinities and NaNs.
const std::vector<float>& inputs() {
  static const std::vector<float> values = [] {
    std::mt19937 rng(42);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::uniform_int_distribution<int> scale(-20, 20);
    std::vector<float> v(kCount);
    for (auto& x : v) x = std::ldexp(normal(rng), scale(rng));
    for (std::size_t i = 0; i < kCount; i += 997) v[i] = std::bit_cast<float>(static_cast<std::uint32_t>(rng()));
    return v;
  }();
  return values;
}

void set_items(benchmark::State& state) {
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(kCount));
}

// Stochastic rounding draws from a RandomStream (seeded per run, as a
// training step would); the other modes ignore it.
template <typename Out>
void convert_to(benchmark::State& state, const Format& to, Policy policy) {
  const auto& in = inputs();
  std::vector<Out> out(kCount);
  std::uint64_t seed = 0;
  for (auto _ : state) {
    const FlagCounts counts = convert_batch(in, to, policy, std::span<Out>(out), RandomStream{++seed, 0});
    benchmark::DoNotOptimize(counts);
    benchmark::DoNotOptimize(out.data());
  }
  set_items(state);
}

// Memory in transparent huge pages (2 MiB-aligned, MADV_HUGEPAGE before its
// first touch), as numpy gives arrays of 4 MiB and more and the Python package
// its large results; std::vector's memory is in 4 KiB pages where THP is
// "madvise" (the TLB misses cost a conversion of 2^24 values about a third of
// its time).
template <typename T>
std::unique_ptr<T[], void (*)(void*)> huge_page_array(std::size_t n) {
  constexpr std::size_t huge_page = std::size_t{2} << 20;
  const std::size_t bytes = (n * sizeof(T) + huge_page - 1) / huge_page * huge_page;
  auto* p = static_cast<T*>(std::aligned_alloc(huge_page, bytes));
  if (p == nullptr) throw std::bad_alloc();
  madvise(p, bytes, MADV_HUGEPAGE);
  return {p, &std::free};
}

// The inputs 16 bytes past a 2 MiB boundary, where malloc puts the data of
// numpy's large arrays (with input and output both on the boundary, fp16 ran
// at twice the time).
std::span<const float> inputs_in_huge_pages() {
  static const auto values = [] {
    auto v = huge_page_array<float>(kCount + 1024);
    std::copy(inputs().begin(), inputs().end(), v.get() + 4);
    return v;
  }();
  return {values.get() + 4, kCount};
}

// The same on every core (convert_parallel: what Python's fmtcheck.convert
// runs), timed by the wall clock; input and output in std::vectors, or
// (huge_pages) both in huge pages, laid out as in tests/bench/python_convert.py.
template <typename Out>
void convert_parallel_to(benchmark::State& state, const Format& to, bool huge_pages) {
  const std::span<const float> in = huge_pages ? inputs_in_huge_pages() : std::span<const float>(inputs());
  std::vector<Out> vector_out(huge_pages ? 0 : kCount);
  const auto huge_out = huge_page_array<Out>(huge_pages ? kCount : 0);
  const std::span<Out> out = huge_pages ? std::span<Out>(huge_out.get(), kCount) : std::span<Out>(vector_out);
  for (auto _ : state) {
    const FlagCounts counts = convert_parallel(BatchSource{in}, to, Policy{}, out);
    benchmark::DoNotOptimize(counts);
    benchmark::DoNotOptimize(out.data());
  }
  set_items(state);
}

// The scalar core itself, one value at a time (unpack + rounding): what every
// exhaustive test and every value the kernel does not serve pays.
// Every 256th float32 bit pattern: the input mix of the exhaustive tests
// (mostly far outside the 8-bit formats' range), in the same ascending order.
const std::vector<float>& every_256th_float32() {
  static const std::vector<float> values = [] {
    std::vector<float> v(kCount);
    for (std::size_t i = 0; i < kCount; ++i) v[i] = std::bit_cast<float>(static_cast<std::uint32_t>(i << 8 | (i & 0xFF)));
    return v;
  }();
  return values;
}

// With a Rounder built once, as the batch fallback and the exhaustive tests
// call it; or (per_call) through round_to_format, which builds one for every
// value, as the arithmetic does.
void core_one_by_one(benchmark::State& state, const std::vector<float>& in, const Format& to, bool per_call) {
  const Policy policy;
  const Rounder round(to, policy);
  for (auto _ : state) {
    std::uint64_t bits = 0;
    std::uint16_t flags = 0;
    for (const float x : in) {
      const Conversion c = per_call ? round_to_format(unpack(x), to, policy) : round(unpack(x));
      bits += c.bits;
      flags |= c.flags.bits();
    }
    benchmark::DoNotOptimize(bits);
    benchmark::DoNotOptimize(flags);
  }
  set_items(state);
}

// Batch decoding of 2^24 codes (the codes the conversions above produce).
template <typename In>
void decode_from(benchmark::State& state, const Format& from) {
  std::vector<In> codes(kCount);
  convert_batch(inputs(), from, Policy{}, std::span<In>(codes));
  std::vector<float> out(kCount);
  for (auto _ : state) {
    decode_batch(std::span<const In>(codes), from, out);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  set_items(state);
}

void reference_memcpy(benchmark::State& state) {
  const auto& in = inputs();
  std::vector<float> out(kCount);
  for (auto _ : state) {
    std::memcpy(out.data(), in.data(), kCount * sizeof(float));
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  set_items(state);
}

__attribute__((target("avx2,f16c"))) void f16c_loop(const float* in, std::uint16_t* out, std::size_t n) {
  for (std::size_t i = 0; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), h);
  }
}

void reference_f16c(benchmark::State& state) {
  if (!__builtin_cpu_supports("f16c") || !__builtin_cpu_supports("avx2")) {
    state.SkipWithError("this CPU has no F16C/AVX2");
    return;
  }
  const auto& in = inputs();
  std::vector<std::uint16_t> out(kCount);
  for (auto _ : state) {
    f16c_loop(in.data(), out.data(), kCount);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  set_items(state);
}

BENCHMARK(reference_memcpy)->Name("reference/memcpy")->Unit(benchmark::kMillisecond);
BENCHMARK(reference_f16c)->Name("reference/f16c")->Unit(benchmark::kMillisecond);

// convert/<format>/<policy>: float32 -> an 8-, 16-, 32- or 64-bit container.
void register_convert(const std::string& name, const Format* f, Policy policy) {
  benchmark::RegisterBenchmark(name.c_str(), [f, policy](benchmark::State& s) {
    switch (f->storage_bits) {
      case 8: return convert_to<std::uint8_t>(s, *f, policy);
      case 16: return convert_to<std::uint16_t>(s, *f, policy);
      case 32: return convert_to<std::uint32_t>(s, *f, policy);
      default: return convert_to<std::uint64_t>(s, *f, policy);
    }
  })->Unit(benchmark::kMillisecond);
}

// decode/<format>: an 8-, 16- or 32-bit container -> float32.
void register_decode(const std::string& name, const Format* f) {
  benchmark::RegisterBenchmark(name.c_str(), [f](benchmark::State& s) {
    switch (f->storage_bits) {
      case 8: return decode_from<std::uint8_t>(s, *f);
      case 16: return decode_from<std::uint16_t>(s, *f);
      default: return decode_from<std::uint32_t>(s, *f);
    }
  })->Unit(benchmark::kMillisecond);
}

// Formats are read when the benchmark runs, not at registration, so the
// presets' static initialisation order does not matter.
const bool registered = [] {
  // Every policy the kernel serves for the four training formats, one axis
  // changed from the default at a time.
  const std::pair<const char*, Policy> policies[] = {
      {"rne", {}},
      {"rna", {.rounding = Rounding::rna}},
      {"rtz", {.rounding = Rounding::rtz}},
      {"rup", {.rounding = Rounding::rup}},
      {"rdn", {.rounding = Rounding::rdn}},
      {"rto", {.rounding = Rounding::rto}},
      {"sat", {.overflow = Overflow::sat}},
      {"ftz", {.subnormals = Subnormals::ftz}},
      {"daz", {.subnormals = Subnormals::daz}},
      {"sr32", {.rounding = Rounding::sr, .random_bit_count = 32}}};
  const std::pair<const char*, const Format*> targets[] = {
      {"fp16", &formats::fp16}, {"bf16", &formats::bf16}, {"e4m3", &formats::e4m3}, {"e5m2", &formats::e5m2}};
  for (const auto& [format_name, f] : targets) {
    for (const auto& [policy_name, policy] : policies) {
      register_convert(std::string("convert/") + format_name + "/" + policy_name, f, policy);
    }
  }
  // What a CUDA kernel's cvt.rn gives (the FP8 forms saturate), NaN as NVIDIA's.
  const Policy cuda{.nan = NanConvention::cuda};
  const Policy cuda_sat{.overflow = Overflow::sat, .nan = NanConvention::cuda};
  register_convert("convert/fp16/cuda", &formats::fp16, cuda);
  register_convert("convert/bf16/cuda", &formats::bf16, cuda);
  register_convert("convert/e4m3/cuda-sat", &formats::e4m3, cuda_sat);
  register_convert("convert/e5m2/cuda-sat", &formats::e5m2, cuda_sat);
  // convert_parallel/<format>/rne: every core, wall-clock time; convert_parallel_huge: in huge pages.
  for (const bool huge : {false, true}) {
    const std::string name = huge ? "convert_parallel_huge/" : "convert_parallel/";
    benchmark::RegisterBenchmark((name + "fp16/rne").c_str(), [huge](benchmark::State& s) { convert_parallel_to<std::uint16_t>(s, formats::fp16, huge); })
        ->Unit(benchmark::kMillisecond)->UseRealTime();
    benchmark::RegisterBenchmark((name + "bf16/rne").c_str(), [huge](benchmark::State& s) { convert_parallel_to<std::uint16_t>(s, formats::bf16, huge); })
        ->Unit(benchmark::kMillisecond)->UseRealTime();
    benchmark::RegisterBenchmark((name + "e4m3/rne").c_str(), [huge](benchmark::State& s) { convert_parallel_to<std::uint8_t>(s, formats::e4m3, huge); })
        ->Unit(benchmark::kMillisecond)->UseRealTime();
    benchmark::RegisterBenchmark((name + "e5m2/rne").c_str(), [huge](benchmark::State& s) { convert_parallel_to<std::uint8_t>(s, formats::e5m2, huge); })
        ->Unit(benchmark::kMillisecond)->UseRealTime();
  }
  register_convert("convert/tf32/rne", &formats::tf32, {});
  register_convert("convert/tf32/rna", &formats::tf32, {.rounding = Rounding::rna});
  register_convert("convert/e8m0/rne", &formats::e8m0, {});
  register_convert("convert/e8m0/rtz", &formats::e8m0, {.rounding = Rounding::rtz});
  register_convert("convert/e8m0/rup", &formats::e8m0, {.rounding = Rounding::rup});
  // P3109 members through the batch table (batch/convert_table.hpp), read
  // beside convert/e4m3/rne (the SIMD kernel) and core/<member>/rne.
  for (const char* member : {"binary8p3se", "binary8p8uf"}) {
    benchmark::RegisterBenchmark((std::string("convert/") + member + "/rne").c_str(), [member](benchmark::State& s) {
      convert_to<std::uint8_t>(s, format_from_string(member), Policy{});
    })->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark((std::string("core/") + member + "/rne").c_str(), [member](benchmark::State& s) {
      core_one_by_one(s, inputs(), format_from_string(member), false);
    })->Unit(benchmark::kMillisecond);
  }
  register_convert("convert/fp32/rne", &formats::fp32, {});
  register_convert("convert/fp64/rne", &formats::fp64, {});
  // Every format decode_batch takes (float32 holds each of its values).
  const std::pair<const char*, const Format*> decoded[] = {
      {"fp16", &formats::fp16},   {"bf16", &formats::bf16},         {"e4m3", &formats::e4m3},
      {"e5m2", &formats::e5m2},   {"e4m3fnuz", &formats::e4m3fnuz}, {"e5m2fnuz", &formats::e5m2fnuz},
      {"e2m3", &formats::e2m3},   {"e3m2", &formats::e3m2},         {"e2m1", &formats::e2m1},
      {"e8m0", &formats::e8m0},   {"tf32", &formats::tf32},         {"fp32", &formats::fp32}};
  for (const auto& [format_name, f] : decoded) register_decode(std::string("decode/") + format_name, f);
  // Names are spelled out: the presets' names may not be constructed yet.
  const std::pair<const char*, const Format*> cores[] = {
      {"core/fp16/rne", &formats::fp16}, {"core/bf16/rne", &formats::bf16},
      {"core/e4m3/rne", &formats::e4m3}, {"core/e5m2/rne", &formats::e5m2}};
  for (const auto& [name, f] : cores) {
    benchmark::RegisterBenchmark(name, [f](benchmark::State& s) { core_one_by_one(s, inputs(), *f, false); })
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark((std::string(name) + "/sweep").c_str(),
                                 [f](benchmark::State& s) { core_one_by_one(s, every_256th_float32(), *f, false); })
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark((std::string(name) + "/per-call").c_str(),
                                 [f](benchmark::State& s) { core_one_by_one(s, inputs(), *f, true); })
        ->Unit(benchmark::kMillisecond);
  }
  return true;
}();

}  // namespace
