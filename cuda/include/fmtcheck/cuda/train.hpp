// A mixed-precision training step (hw train): a 64-32-10 ReLU MLP on the
// digits data, fp32 master weights, fp16 or bf16 tensor-core GEMMs with fp32
// accumulation and GradScaler loss scaling (torch defaults: growth ×2 after
// `growth_interval` finite steps, backoff ×0.5 and skip on inf/NaN).
//
// The step is written once, over two operations that are the question:
// rounding fp32 to the half format and the tensor-core GEMM. TensorOps
// supplies them: the GPU (cvt.rn and a chain of mma.sync m16n8k16), the
// emulator (convert and gemm under the GPU's model) or, in the tests, a
// reference built on dot_product_add. Everything else (bias, ReLU, softmax,
// loss, scaling, the update) is fp32 arithmetic on the host, the same code
// for every TensorOps, in a fixed order (no atomics, no reassociation).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fmtcheck/analysis/scaling.hpp"
#include "fmtcheck/core/format.hpp"
#include "fmtcheck/tensor_core/tensor_core.hpp"

namespace fmtcheck::cuda {

struct Digits {
  std::vector<float> pixels;  // 64 per image, scaled to [0, 1] (value / 16)
  std::vector<int> labels;    // 0..9
  [[nodiscard]] std::size_t count() const { return labels.size(); }
};

// scikit-learn's digits.csv: per line 64 pixel values 0..16 and the label.
// Throws std::invalid_argument naming the line of anything else.
Digits parse_digits_csv(std::string_view text);
Digits read_digits_csv(const std::string& path);

struct Mlp {
  static constexpr std::size_t inputs = 64, hidden = 32, classes = 10;
  std::vector<float> w1, b1, w2, b2;  // w1 hidden×inputs, w2 classes×hidden, row-major
};
// torch.nn.Linear's initialisation U(-1/sqrt(fan_in), 1/sqrt(fan_in)),
// drawn from splitmix64(seed, i).
Mlp initial_mlp(std::uint64_t seed);

struct TrainConfig {
  const Format* half = &formats::fp16;  // fp16 or bf16
  std::size_t batch = 32;               // a multiple of 16
  float learning_rate = 0.05f;
};

// The two operations the hardware does.
class TensorOps {
 public:
  virtual ~TensorOps() = default;
  // fp32 -> container bits of `half`, rounded to nearest even (NVIDIA NaN).
  virtual std::vector<std::uint32_t> to_half(const Format& half, std::span<const float> x) = 0;
  // D = A·B in fp32 from +0: A M×K, B K×N row-major half bits; M a multiple
  // of 16, N of 8, K of 16 (the step pads).
  virtual std::vector<float> gemm(const Format& half, std::size_t m, std::size_t n, std::size_t k,
                                  std::span<const std::uint32_t> a, std::span<const std::uint32_t> b) = 0;
};

// What one step did.
struct StepResult {
  float loss = 0;               // mean cross-entropy of the batch (unscaled)
  float scale = 0;              // the loss scale the step used
  bool skipped = false;         // an inf/NaN gradient: no update, scale backed off
  std::uint64_t underflow = 0;  // scaled gradient values rounded from nonzero to zero in `half`
  std::uint64_t overflow = 0;   // scaled gradient values rounded from finite to inf in `half`
};

// One step on images [first, first + batch) (wrapping around the data):
// updates `mlp` and `scaler` (the library's torch GradScaler) in place.
StepResult train_step(TensorOps& ops, const TrainConfig& config, const Digits& data, std::size_t first, Mlp& mlp,
                      GradScaler& scaler);

// The emulator's TensorOps: fmtcheck's conversion and gemm() under `model`.
class EmulatedOps final : public TensorOps {
 public:
  explicit EmulatedOps(const DotModel& model) : model_(model) {}
  std::vector<std::uint32_t> to_half(const Format& half, std::span<const float> x) override;
  std::vector<float> gemm(const Format& half, std::size_t m, std::size_t n, std::size_t k,
                          std::span<const std::uint32_t> a, std::span<const std::uint32_t> b) override;

 private:
  DotModel model_;
};

// The GPU's TensorOps on device 0: cvt.rn.f16.f32 / cvt.rn.bf16.f32 and a
// chain of mma.sync m16n8k16 (f32 accumulators) per 16×8 block of D, K in
// order.
class DeviceOps final : public TensorOps {
 public:
  std::vector<std::uint32_t> to_half(const Format& half, std::span<const float> x) override;
  std::vector<float> gemm(const Format& half, std::size_t m, std::size_t n, std::size_t k,
                          std::span<const std::uint32_t> a, std::span<const std::uint32_t> b) override;
};

// Throws std::invalid_argument unless half is fp16 or bf16 and the sizes
// fit the tile (M % 16, N % 8, K % 16, A and B sizes); DeviceOps checks
// this before any device use.
void check_tile_gemm(const Format& half, std::size_t m, std::size_t n, std::size_t k, std::span<const std::uint32_t> a,
                     std::span<const std::uint32_t> b);

}  // namespace fmtcheck::cuda
