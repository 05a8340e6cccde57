// The training step of `hw train` without a GPU: the library's step on the
// emulator's operations (fmtcheck's gemm() under the GPU's model) against
// the same step on a reference that runs the hardware kernel's arithmetic
// literally (k zero-padded to the instruction's, one dot_product_add per
// mma.sync m16n8k16, or m16n8k8 for tf32, each D the next C); and
// DeviceOps' argument checks, which come before any device use.
#include <doctest/doctest.h>

#include <bit>
#include <stdexcept>

#include "fmtcheck/core/convert.hpp"
#include "fmtcheck/cuda/convert.hpp"
#include "fmtcheck/cuda/train.hpp"
#include "fmtcheck/train/digits.hpp"
#include "fmtcheck/train/trainer.hpp"

using namespace fmtcheck;

namespace {

class ReferenceOps final : public train::TensorOps {
 public:
  explicit ReferenceOps(const DotModel& model) : model_(model) {}
  std::vector<std::uint32_t> cast(const Format& to, const Policy& policy, std::span<const float> x,
                                  FlagCounts& counts) override {
    std::vector<std::uint32_t> out;
    for (const float v : x) {
      const Conversion c = convert(v, to, policy);
      counts.add(c.flags);
      out.push_back(static_cast<std::uint32_t>(c.bits));
    }
    return out;
  }
  std::vector<float> gemm(const train::Operand& a, const train::Operand& b, std::size_t m, std::size_t n,
                          std::size_t k) override {
    std::vector<float> d(m * n);
    const std::size_t step = *a.format == formats::tf32 ? 8 : 16;
    std::vector<std::uint64_t> ra(step), cb(step);
    for (std::size_t i = 0; i < m; ++i) {
      for (std::size_t j = 0; j < n; ++j) {
        std::uint64_t c = 0;  // +0
        for (std::size_t k0 = 0; k0 < k; k0 += step) {
          for (std::size_t t = 0; t < step; ++t) {
            ra[t] = k0 + t < k ? a.bits[i * k + k0 + t] : 0;
            cb[t] = k0 + t < k ? b.bits[j * k + k0 + t] : 0;
          }
          c = dot_product_add(model_, *a.format, ra, cb, c, formats::fp32).bits;
        }
        d[i * n + j] = std::bit_cast<float>(static_cast<std::uint32_t>(c));
      }
    }
    return d;
  }

 private:
  DotModel model_;
};

// 64 images: class c lights pixels 6c .. 6c+5 (value 1) and a few others.
train::Digits synthetic_digits() {
  train::Digits d;
  for (int i = 0; i < 64; ++i) {
    const int label = i % 10;
    for (int p = 0; p < 64; ++p) {
      const bool lit = (p >= 6 * label && p < 6 * label + 6) || p == (i * 7) % 64;
      d.pixels.push_back(lit ? 1.0f : static_cast<float>((i + p) % 3) / 16.0f);
    }
    d.labels.push_back(label);
  }
  return d;
}

std::vector<std::uint32_t> weight_bits(train::Model& m) {
  std::vector<std::uint32_t> out;
  for (const train::Parameter* p : m.parameters()) {
    for (const float v : p->value) out.push_back(std::bit_cast<std::uint32_t>(v));
  }
  return out;
}

}  // namespace

TEST_CASE("the library's step on the emulator equals the mma.sync chain, step by step, bit for bit") {
  const train::Digits data = synthetic_digits();
  train::TrainConfig config;
  config.batch = 24;  // not a multiple of the tile: the reference pads k, the emulator does not
  config.recipe.scaler.init_scale = 1024.0;
  for (const char* model_name : {"ampere", "hopper"}) {
    for (const char* recipe_name : {"fp16", "bf16", "tf32", "bf16-pure-sr"}) {
      CAPTURE(model_name);
      CAPTURE(recipe_name);
      const TensorCoreModel& model = *find_tensor_core_model(model_name);
      const train::Recipe recipe = *train::find_recipe(recipe_name);
      train::EmulatedOps emulated(model);
      ReferenceOps reference(*model.for_input(*recipe.forward));
      train::DigitsMlp a(data, data, 3), b(data, data, 3);
      train::Trainer ta(recipe, config, a, emulated), tb(recipe, config, b, reference);
      for (std::size_t step = 0; step < 4; ++step) {
        const train::StepRecord ra = ta.step(), rb = tb.step();
        CHECK(std::bit_cast<std::uint32_t>(ra.loss) == std::bit_cast<std::uint32_t>(rb.loss));
        CHECK(std::bit_cast<std::uint32_t>(ra.grad_norm) == std::bit_cast<std::uint32_t>(rb.grad_norm));
        CHECK_FALSE(ra.skipped);
        CHECK(weight_bits(a) == weight_bits(b));
      }
    }
  }
}

TEST_CASE("DeviceOps checks its operands before any device use") {
  const std::vector<std::uint32_t> a(16 * 16), b(8 * 16);
  const train::Operand fa{&formats::fp16, a}, fb{&formats::fp16, b};
  CHECK_NOTHROW(cuda::check_tile_gemm(fa, fb, 16, 8, 16));
  CHECK_NOTHROW(cuda::check_tile_gemm(fa, fb, 32, 16, 8));  // any sizes: the device pads
  CHECK_THROWS_AS(cuda::check_tile_gemm(fa, fb, 16, 8, 8), std::invalid_argument);
  CHECK_THROWS_AS(cuda::check_tile_gemm({&formats::e4m3, a}, {&formats::e4m3, b}, 16, 8, 16), std::invalid_argument);
  CHECK_NOTHROW(cuda::check_tile_gemm({&formats::tf32, a}, {&formats::tf32, b}, 16, 8, 16));
  CHECK_THROWS_AS(cuda::check_tile_gemm(fa, {&formats::bf16, b}, 16, 8, 16), std::invalid_argument);
  CHECK_THROWS_AS(cuda::check_tile_gemm({&formats::fp16, a, 0.5f}, fb, 16, 8, 16), std::invalid_argument);
  cuda::DeviceOps device;
  CHECK_THROWS_AS(device.gemm(fa, {&formats::fp16, {}}, 16, 8, 16), std::invalid_argument);
  FlagCounts counts;
  const std::vector<float> x(4, 1.0f);
  CHECK_THROWS_AS(device.cast(formats::e4m3, train::activation_policy(), x, counts), std::invalid_argument);
  CHECK_THROWS_AS(device.cast(formats::fp16, Policy{}, x, counts), std::invalid_argument);  // not cvt.rn's NaN
  // tf32 under truncation is the fp32 register as it is (the mma truncates);
  // a value below tf32's smallest subnormal counts as underflowing.
  const std::vector<float> y = {1.0f + 0x1p-20f, -0x1p-140f, 0.0f};
  FlagCounts tf32_counts;
  const train::Recipe tf32 = *train::find_recipe("tf32");
  CHECK(device.cast(formats::tf32, tf32.operand_policy, y, tf32_counts) ==
        std::vector<std::uint32_t>{std::bit_cast<std::uint32_t>(y[0]), std::bit_cast<std::uint32_t>(y[1]), 0u});
  CHECK(tf32_counts[Flag::tiny_to_zero] == 1);
  CHECK_THROWS_AS(device.cast(formats::tf32, train::activation_policy(), y, counts), std::invalid_argument);
  // What the fp16 and bf16 recipes ask for is what cvt.rn does.
  for (const char* name : {"fp16", "bf16"}) {
    const train::Recipe r = *train::find_recipe(name);
    CHECK(cuda::find_device_conversion(*r.forward, Rounding::rne)->policy() == r.operand_policy);
    CHECK(r.operand_policy == train::activation_policy());
  }
}
