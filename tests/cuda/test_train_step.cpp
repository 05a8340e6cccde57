// The training step of `hw train` without a GPU: the emulator's replay
// (fmtcheck's gemm() fast path) against a reference that runs the hardware
// kernel's arithmetic literally (one dot_product_add per mma.sync m16n8k16,
// each D the next C), GradScaler's skip/backoff/growth and the
// underflow/overflow counts worked out by hand, and the digits CSV reader.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <stdexcept>

#include "fmtcheck/core/convert.hpp"
#include "fmtcheck/cuda/train.hpp"

using namespace fmtcheck;
using namespace fmtcheck::cuda;

namespace {

GradScaler scaler_starting_at(double scale, int growth_interval = 2000) {
  GradScalerConfig config;
  config.init_scale = scale;
  config.growth_interval = growth_interval;
  return GradScaler(config);
}

class ReferenceOps final : public TensorOps {
 public:
  explicit ReferenceOps(const DotModel& model) : model_(model) {}
  std::vector<std::uint32_t> to_half(const Format& half, std::span<const float> x) override {
    Policy p;  // cvt.rn: nearest even, IEEE overflow, NVIDIA's one NaN
    p.nan = NanConvention::cuda;
    std::vector<std::uint32_t> out;
    for (const float v : x) out.push_back(static_cast<std::uint32_t>(convert(v, half, p).bits));
    return out;
  }
  std::vector<float> gemm(const Format& half, std::size_t m, std::size_t n, std::size_t k,
                          std::span<const std::uint32_t> a, std::span<const std::uint32_t> b) override {
    std::vector<float> d(m * n);
    std::vector<std::uint64_t> ra(16), cb(16);
    for (std::size_t i = 0; i < m; ++i) {
      for (std::size_t j = 0; j < n; ++j) {
        std::uint64_t c = 0;  // +0
        for (std::size_t k0 = 0; k0 < k; k0 += 16) {
          for (std::size_t t = 0; t < 16; ++t) {
            ra[t] = a[i * k + k0 + t];
            cb[t] = b[(k0 + t) * n + j];
          }
          c = dot_product_add(model_, half, ra, cb, c, formats::fp32).bits;
        }
        d[i * n + j] = std::bit_cast<float>(static_cast<std::uint32_t>(c));
      }
    }
    return d;
  }

 private:
  DotModel model_;
};

// 64 images: class c lights pixels 6c .. 6c+5 (value 16) and a few others.
Digits synthetic_digits() {
  Digits d;
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

bool same_bits(const std::vector<float>& x, const std::vector<float>& y) {
  if (x.size() != y.size()) return false;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (std::bit_cast<std::uint32_t>(x[i]) != std::bit_cast<std::uint32_t>(y[i])) return false;
  }
  return true;
}

bool same_weights(const Mlp& a, const Mlp& b) {
  return same_bits(a.w1, b.w1) && same_bits(a.b1, b.b1) && same_bits(a.w2, b.w2) && same_bits(a.b2, b.b2);
}

}  // namespace

TEST_CASE("the emulator's replay equals the mma.sync chain, step by step, bit for bit") {
  const Digits data = synthetic_digits();
  for (const char* model_name : {"ampere", "hopper"}) {
    for (const Format* half : {&formats::fp16, &formats::bf16}) {
      CAPTURE(model_name);
      CAPTURE(half->name);
      const DotModel model = *find_tensor_core_model(model_name)->for_input(*half);
      EmulatedOps emulated(model);
      ReferenceOps reference(model);
      TrainConfig config;
      config.half = half;
      Mlp a = initial_mlp(3), b = a;
      GradScaler sa(scaler_starting_at(1024.0)), sb = sa;
      for (std::size_t step = 0; step < 4; ++step) {
        const StepResult ra = train_step(emulated, config, data, step * config.batch, a, sa);
        const StepResult rb = train_step(reference, config, data, step * config.batch, b, sb);
        CHECK(std::bit_cast<std::uint32_t>(ra.loss) == std::bit_cast<std::uint32_t>(rb.loss));
        CHECK(ra.underflow == rb.underflow);
        CHECK_FALSE(ra.skipped);
        CHECK(same_weights(a, b));
      }
    }
  }
}

TEST_CASE("GradScaler: overflow skips and halves, growth doubles, underflow is counted") {
  const Digits data = synthetic_digits();
  const DotModel model = *find_tensor_core_model("ampere")->for_input(formats::fp16);
  EmulatedOps ops(model);
  TrainConfig config;
  // |(p - y) / 32| reaches about 1/32: times 2^24 that is 2^19, beyond fp16's
  // 65504, so the first steps overflow, skip and halve until it fits.
  Mlp mlp = initial_mlp(1);
  GradScaler scaler(scaler_starting_at(16777216.0, 2));  // 2^24
  const Mlp start = mlp;
  StepResult r = train_step(ops, config, data, 0, mlp, scaler);
  CHECK(r.scale == 16777216.0f);
  CHECK(r.skipped);
  CHECK(r.overflow > 0);
  CHECK(scaler.scale() == 8388608.0);
  CHECK(same_weights(mlp, start));
  int skipped = 1;
  while ((r = train_step(ops, config, data, 0, mlp, scaler)).skipped) ++skipped;
  CHECK(r.overflow == 0);
  CHECK(r.scale == std::ldexp(1.0f, 24 - skipped));
  CHECK_FALSE(same_weights(mlp, start));
  // The second good step in a row doubles the scale.
  CHECK(scaler.scale() == r.scale);
  CHECK_FALSE(train_step(ops, config, data, 32, mlp, scaler).skipped);
  CHECK(scaler.scale() == 2 * r.scale);

  // A tiny scale: gradients below fp16's smallest subnormal (2^-24) vanish.
  GradScaler tiny(scaler_starting_at(std::ldexp(1.0, -30)));
  Mlp m2 = initial_mlp(1);
  const StepResult u = train_step(ops, config, data, 0, m2, tiny);
  CHECK_FALSE(u.skipped);
  CHECK(u.underflow > 0);
  CHECK(u.overflow == 0);
}

TEST_CASE("training lowers the loss") {
  const Digits data = synthetic_digits();
  EmulatedOps ops(*find_tensor_core_model("hopper")->for_input(formats::bf16));
  TrainConfig config;
  config.half = &formats::bf16;
  config.learning_rate = 0.5f;
  Mlp mlp = initial_mlp(0);
  GradScaler scaler;
  const float first = train_step(ops, config, data, 0, mlp, scaler).loss;
  float last = first;
  for (std::size_t step = 1; step < 40; ++step) last = train_step(ops, config, data, step * 32, mlp, scaler).loss;
  CHECK(first > 2.0f);  // about ln 10 at the start
  CHECK(last < first / 2);
}

TEST_CASE("step arguments, tile GEMM sizes and the digits CSV are checked") {
  const Digits data = synthetic_digits();
  EmulatedOps ops(*find_tensor_core_model("ampere")->for_input(formats::fp16));
  Mlp mlp = initial_mlp(0);
  GradScaler scaler;
  TrainConfig bad;
  bad.half = &formats::e4m3;
  CHECK_THROWS_AS(train_step(ops, bad, data, 0, mlp, scaler), std::invalid_argument);
  bad = {};
  bad.batch = 24;
  CHECK_THROWS_AS(train_step(ops, bad, data, 0, mlp, scaler), std::invalid_argument);
  const std::vector<std::uint32_t> a(16 * 16), b(16 * 8);
  CHECK_NOTHROW(check_tile_gemm(formats::bf16, 16, 8, 16, a, b));
  CHECK_THROWS_AS(check_tile_gemm(formats::bf16, 16, 8, 8, a, b), std::invalid_argument);
  CHECK_THROWS_AS(check_tile_gemm(formats::tf32, 16, 8, 16, a, b), std::invalid_argument);
  CHECK_THROWS_AS(DeviceOps().gemm(formats::fp16, 16, 8, 16, a, {}), std::invalid_argument);  // before any device use

  std::string line;
  for (int i = 0; i < 64; ++i) line += std::to_string(i % 17) + ",";
  const Digits two = parse_digits_csv(line + "7\n" + line + "3\n");
  CHECK(two.count() == 2);
  CHECK(two.labels[1] == 3);
  CHECK(two.pixels[16] == 1.0f);  // 16 / 16
  CHECK(two.pixels[1] == 0.0625f);
  CHECK_THROWS_WITH_AS(parse_digits_csv(line + "7\n" + line + "10\n"),
                       "digits CSV line 2: expected 64 pixel values and a label 0..9", std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_digits_csv("1,x\n"), "digits CSV line 1: 'x' is not an integer 0..16",
                       std::invalid_argument);
  CHECK_THROWS_AS(parse_digits_csv(line + "\n"), std::invalid_argument);
  CHECK_THROWS_AS(parse_digits_csv(""), std::invalid_argument);
  CHECK_THROWS_AS(read_digits_csv("/nonexistent/digits.csv"), std::invalid_argument);
}
