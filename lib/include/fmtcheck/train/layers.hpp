// Layers written once for every recipe: the Autocast decides the formats,
// the layer only says which tensors meet in which GEMM. Elementwise and
// reduction work is float32 in a fixed order (exact_math.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "fmtcheck/train/autocast.hpp"

namespace fmtcheck::train {

// A float32 master parameter and its float32 gradient.
struct Parameter {
  std::string name;
  std::vector<float> value, grad;
};

// torch.nn.Linear's initialisation U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for
// `count` values: value i is (2u - 1)·bound rounded to float32, with
// u = (splitmix64(seed, position + i) >> 11) · 2^-53 and bound =
// 1/sqrt(fan_in) in float32. Advances `position` by `count`.
std::vector<float> uniform_init(std::uint64_t seed, std::uint64_t& position, std::size_t fan_in, std::size_t count);

// y = x·Wᵀ + b. Under a low-precision recipe x and W are cast to the forward
// format, the product runs on the tensor core, the bias (in the activation
// format) is added in float32 and the sum rounded to the activation format,
// as cuBLASLt's bias epilogue does. Backward: the incoming gradient is cast
// to the gradient format; dx = dy·W and dW = dyᵀ·x are tensor-core GEMMs
// rounded to the activation format; db is the float32 column sum of dy,
// rounded likewise. Recorded tensors: NAME.input, .weight, .output,
// .grad_output, .grad_input, .grad_weight, .grad_bias, and under MX the
// columnwise casts NAME.weight.t, .grad_output.t, .input.t.
class Linear {
 public:
  Linear(std::string name, std::size_t in, std::size_t out, std::uint64_t seed, std::uint64_t& position);
  std::vector<float> forward(Autocast& ac, std::span<const float> x, std::size_t rows);
  // Sets weight.grad and bias.grad from dy (rows×out); returns dx unless want_dx is false.
  std::vector<float> backward(Autocast& ac, std::span<const float> dy, bool want_dx);
  Parameter weight, bias;  // weight out×in, row-major

 private:
  std::string name_;
  std::size_t in_, out_, rows_ = 0;
  std::vector<float> x_;  // the input, for dW (float32, and MX's columnwise cast)
  Quantized qx_, qw_;     // low-precision recipes: the cast operands, reused by backward
};

// max(x, 0); backward passes dy where the forward input was > 0, else +0.
std::vector<float> relu(std::span<const float> x);
std::vector<float> relu_backward(std::span<const float> x, std::span<const float> dy);

// Mean softmax cross-entropy of rows×classes logits, in float32:
// logp = (l - max) - log(sum exp(l - max)), loss = sum(-logp[label]) / rows
// (rows in order). The gradient, for a loss multiplied by loss_scale, is
// torch's log_softmax backward: with g = loss_scale / rows,
// dl = exp(logp)·g, minus g at the label.
struct LossResult {
  float loss = 0;
  std::vector<float> grad;
  std::size_t correct = 0;  // rows whose largest logit (first on ties) is the label
};
LossResult softmax_cross_entropy(std::span<const float> logits, std::span<const int> labels, std::size_t classes,
                                 float loss_scale);

}  // namespace fmtcheck::train
