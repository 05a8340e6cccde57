// On a GPU: the tensor analysis computed there (cuda/src/emulator/analysis.cu)
// equals the CPU's analyze_tensor of the same float32 values, count for
// count: the input summary and its histogram, every format's counts and
// largest errors, the best power-of-two scale, MX blocks one by one; the
// mean and RMS relative errors (sums taken in another order) to within
// 1e-10 relative. Formats of 8 to 32 bits, every --scale, MX blocks under
// each scale rule, stochastic rounding with a seed.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "../../cuda/src/device_buffer.hpp"
#include "fmtcheck/analysis/tensor_analysis.hpp"
#include "fmtcheck/core/policy_text.hpp"
#include "fmtcheck/cuda/emulated_analysis.hpp"

using namespace fmtcheck;

namespace {

// Values over many binades (both signs), zeros, subnormals, powers of two,
// the specials, and a stretch of large values that overflows FP8.
std::vector<float> tensor(std::size_t n) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  std::uniform_int_distribution<int> binade(-40, 20);
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = normal(rng) * std::ldexp(1.0f, binade(rng));
  for (std::size_t i = 0; i < n; i += 97) v[i] = 0.0f;
  for (std::size_t i = 5; i < n; i += 101) v[i] = std::ldexp(1.0f, binade(rng));
  for (std::size_t i = 7; i < n; i += 1009) v[i] = std::bit_cast<float>(static_cast<std::uint32_t>(rng() % 0x800000));
  for (std::size_t i = 0; i < 4096 && i < n; ++i) v[n / 2 + i % (n / 2)] *= 1e6f;
  const float specials[] = {INFINITY, -INFINITY, NAN, -0.0f, std::bit_cast<float>(0x7F800001u)};
  for (std::size_t i = 0; i < std::size(specials); ++i) v[11 + 13 * i] = specials[i];
  return v;
}

bool close(double a, double b) { return a == b || std::fabs(a - b) <= 1e-10 * std::fabs(b); }

void compare(const TensorAnalysis& gpu, const TensorAnalysis& cpu) {
  CHECK(gpu.input.values == cpu.input.values);
  CHECK(gpu.input.zero == cpu.input.zero);
  CHECK(gpu.input.nan == cpu.input.nan);
  CHECK(gpu.input.inf == cpu.input.inf);
  CHECK(gpu.input.amax == cpu.input.amax);
  CHECK(gpu.input.binade_count == cpu.input.binade_count);
  CHECK(gpu.input.power_of_two_count == cpu.input.power_of_two_count);
  REQUIRE(gpu.formats.size() == cpu.formats.size());
  for (std::size_t f = 0; f < cpu.formats.size(); ++f) {
    const FormatAnalysis &g = gpu.formats[f], &c = cpu.formats[f];
    CAPTURE(c.format.name);
    CHECK(g.scale == c.scale);
    CHECK(g.best == c.best);
    CHECK(g.underflow_at_best == c.underflow_at_best);
    REQUIRE(g.measures.size() == c.measures.size());
    for (std::size_t m = 0; m < c.measures.size(); ++m) {
      CAPTURE(c.measures[m].first);
      const bool sum = c.measures[m].first == "mean_rel_error" || c.measures[m].first == "rms_rel_error";
      CHECK(g.measures[m].first == c.measures[m].first);
      if (sum) {
        CHECK(close(g.measures[m].second, c.measures[m].second));
      } else {
        CHECK(std::bit_cast<std::uint64_t>(g.measures[m].second) == std::bit_cast<std::uint64_t>(c.measures[m].second));
      }
    }
    REQUIRE(g.blocks.size() == c.blocks.size());
    std::size_t differ = 0;
    for (std::size_t b = 0; b < c.blocks.size(); ++b) {
      const ConversionStats &gs = g.blocks[b].stats, &cs = c.blocks[b].stats;
      differ += g.blocks[b].amax != c.blocks[b].amax || g.blocks[b].scale_log2 != c.blocks[b].scale_log2 ||
                gs.values != cs.values || gs.exact != cs.exact || gs.inexact != cs.inexact ||
                gs.overflow != cs.overflow || gs.saturated != cs.saturated ||
                gs.underflow_to_zero != cs.underflow_to_zero || gs.subnormal != cs.subnormal ||
                gs.max_abs_error != cs.max_abs_error || gs.max_rel_error != cs.max_rel_error ||
                !close(gs.sum_rel_error, cs.sum_rel_error);
    }
    CHECK(differ == 0);
  }
}

}  // namespace

TEST_CASE("tensor analysis on the GPU equals the CPU's, count for count") {
  const std::vector<float> values = tensor((std::size_t{1} << 20) + 333);  // not a whole number of blocks
  const cuda::detail::DeviceBuffer<float> device(values);
  const MemoryTensor t{"t", formats::fp32, {values.size()}, values.data()};
  const auto file = memory_tensors("test", {t});
  std::vector<Format> formats;
  for (const char* name : {"fp16", "bf16", "tf32", "e4m3", "e5m2", "e4m3fnuz", "e2m1", "e3m2", "binary8p3se"}) {
    formats.push_back(*parse_format(name));
  }
  int settings_compared = 0;
  for (const char* scale : {"none", "auto", "amax", "amax:2", "pow2:-3", "pow2:20"}) {
    for (const char* round : {"rne", "sr"}) {
      AnalysisSettings s;
      s.formats = formats;
      PolicyText text;
      text.round = round;
      text.sr_bits = std::string(round) == "sr" ? 12 : 0;
      text.overflow = std::string(scale) == "none" ? "nosat" : "sat";
      s.policy = policy_from_text(text);
      s.seed = 5;
      s.scale = scale;
      CAPTURE(scale);
      CAPTURE(round);
      compare(cuda::analyze_on_gpu(device.get(), values.size(), s), analyze_tensor(*file, 0, s));
      ++settings_compared;
    }
  }
  for (const char* rule : {"ocp", "ceil", "rne"}) {
    AnalysisSettings s;
    s.formats = {formats::e4m3, formats::e5m2, formats::e2m1, formats::e3m2};
    s.block = 32;
    s.scale_rule = rule;
    s.keep_blocks = std::string(rule) == "ocp";
    CAPTURE(rule);
    compare(cuda::analyze_on_gpu(device.get(), values.size(), s), analyze_tensor(*file, 0, s));
    ++settings_compared;
  }
  CHECK(settings_compared == 15);
}

TEST_CASE("tensor analysis on the GPU refuses what the CPU refuses, and formats wider than 32 bits") {
  const std::vector<float> values(64, 1.0f);
  const cuda::detail::DeviceBuffer<float> device(values);
  AnalysisSettings s;
  s.formats = {formats::fp64};
  CHECK_THROWS_AS(cuda::analyze_on_gpu(device.get(), values.size(), s), std::invalid_argument);
  s.formats = {formats::e4m3};
  s.scale = "sometimes";
  CHECK_THROWS_WITH_AS(cuda::analyze_on_gpu(device.get(), values.size(), s),
                       "bad --scale 'sometimes': expected none, auto, amax[:MARGIN] or pow2:N", std::invalid_argument);
}
