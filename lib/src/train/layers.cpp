#include "fmtcheck/train/layers.hpp"

#include <algorithm>
#include <cmath>

#include "fmtcheck/core/random.hpp"
#include "fmtcheck/train/exact_math.hpp"

namespace fmtcheck::train {

std::vector<float> uniform_init(std::uint64_t seed, std::uint64_t& position, std::size_t fan_in, std::size_t count) {
  const float bound = 1.0f / std::sqrt(static_cast<float>(fan_in));
  std::vector<float> v(count);
  for (float& x : v) {
    const double u = static_cast<double>(splitmix64(seed, position++) >> 11) * 0x1.0p-53;  // [0, 1)
    x = static_cast<float>((2.0 * u - 1.0) * bound);
  }
  return v;
}

Linear::Linear(std::string name, std::size_t in, std::size_t out, std::uint64_t seed, std::uint64_t& position)
    : name_(std::move(name)), in_(in), out_(out) {
  weight = {name_ + ".weight", uniform_init(seed, position, in, out * in), std::vector<float>(out * in)};
  bias = {name_ + ".bias", uniform_init(seed, position, in, out), std::vector<float>(out)};
}

std::vector<float> Linear::forward(Autocast& ac, std::span<const float> x, std::size_t rows) {
  rows_ = rows;
  std::vector<float> y;
  std::vector<float> b = bias.value;
  x_.assign(x.begin(), x.end());
  if (ac.float32()) {
    y = matmul_fma(x, weight.value, rows, out_, in_);
  } else {
    qx_ = ac.operand(name_ + ".input", Role::forward, x, rows, in_);
    qw_ = ac.operand(name_ + ".weight", Role::forward, weight.value, out_, in_);
    y = ac.gemm(qx_, qw_);
    b = ac.to_activation("", std::move(b));
  }
  for (std::size_t i = 0; i < y.size(); ++i) y[i] += b[i % out_];
  return ac.to_activation(name_ + ".output", std::move(y));
}

std::vector<float> Linear::backward(Autocast& ac, std::span<const float> dy, bool want_dx) {
  std::vector<float> dx;
  if (ac.float32()) {
    const std::vector<float> w_t = transpose<float>(weight.value, out_, in_);
    const std::vector<float> dy_t = transpose<float>(dy, rows_, out_);
    if (want_dx) dx = matmul_fma(dy, w_t, rows_, in_, out_);
    weight.grad = matmul_fma(dy_t, transpose<float>(x_, rows_, in_), out_, in_, rows_);
    bias.grad = column_sums(dy, rows_, out_);
    return dx;
  }
  const std::string grad_output = name_ + ".grad_output";
  const Quantized qdy = ac.operand(grad_output, Role::gradient, dy, rows_, out_);
  if (want_dx) {
    const Quantized w_t = ac.columnwise(name_ + ".weight", Role::forward, qw_, weight.value);
    dx = ac.to_activation(name_ + ".grad_input", ac.gemm(qdy, w_t));
  }
  const Quantized dy_t = ac.columnwise(grad_output, Role::gradient, qdy, dy);
  const Quantized x_t = ac.columnwise(name_ + ".input", Role::forward, qx_, x_);
  weight.grad = ac.to_activation(name_ + ".grad_weight", ac.gemm(dy_t, x_t));
  bias.grad = ac.to_activation(name_ + ".grad_bias", column_sums(dy, rows_, out_));
  return dx;
}

std::vector<float> relu(std::span<const float> x) {
  std::vector<float> y(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  return y;
}

std::vector<float> relu_backward(std::span<const float> x, std::span<const float> dy) {
  std::vector<float> dx(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) dx[i] = x[i] > 0.0f ? dy[i] : 0.0f;
  return dx;
}

LossResult softmax_cross_entropy(std::span<const float> logits, std::span<const int> labels, std::size_t classes,
                                 float loss_scale) {
  const std::size_t rows = labels.size();
  LossResult r;
  r.grad.resize(logits.size());
  const float g = loss_scale / static_cast<float>(rows);
  float total = 0.0f;
  for (std::size_t i = 0; i < rows; ++i) {
    const float* l = &logits[i * classes];
    const auto label = static_cast<std::size_t>(labels[i]);
    float top = l[0];
    std::size_t arg = 0;
    for (std::size_t c = 1; c < classes; ++c) {
      if (l[c] > top) top = l[c], arg = c;
    }
    r.correct += arg == label ? 1 : 0;
    float sum = 0.0f;
    for (std::size_t c = 0; c < classes; ++c) sum += exp_f32(l[c] - top);
    const float log_sum = log_f32(sum);
    for (std::size_t c = 0; c < classes; ++c) {
      const float logp = (l[c] - top) - log_sum;
      if (c == label) total += -logp;
      const float d = exp_f32(logp) * g;
      r.grad[i * classes + c] = c == label ? d - g : d;
    }
  }
  r.loss = total / static_cast<float>(rows);
  return r;
}

}  // namespace fmtcheck::train
