// Softmax and layer norm over the rows of a matrix, in float32, one IEEE
// operation per step in the order written below: the trainer's transformer
// uses them, and fmtcheck.torch offers them in place of torch's own kernels
// (which reduce in an unpublished order) so that a torch model can be held
// to `fmtcheck train` bit for bit.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace fmtcheck::train {

// Each row of a rows×cols matrix: top = max of the row (columns in order),
// p = exp_f32(x - top), sum = the p added in order from +0, p / sum. A -inf
// entry (a masked position) gives p = 0 and adds nothing.
std::vector<float> softmax_rows(std::span<const float> x, std::size_t cols);

// The gradient of the input from the output p and its gradient dp, torch's
// formula: dot = sum of dp·p over the row in order, dx = p·(dp - dot).
std::vector<float> softmax_rows_backward(std::span<const float> p, std::span<const float> dp, std::size_t cols);

// Layer norm over rows of width gamma.size() (biased variance):
// mean = sum(x)/d, var = sum((x - mean)²)/d, rstd = 1/sqrt(var + eps),
// xhat = (x - mean)·rstd, y = xhat·gamma + beta. Keeps xhat and rstd.
struct LayerNormResult {
  std::vector<float> y, xhat, rstd;
};
LayerNormResult layer_norm(std::span<const float> x, std::span<const float> gamma, std::span<const float> beta,
                           float eps);

// With g = dy·gamma: dx = ((g - sum(g)/d) - xhat·(sum(g·xhat)/d))·rstd;
// dgamma and dbeta add dy·xhat and dy over the rows in order.
struct LayerNormGrads {
  std::vector<float> dx, dgamma, dbeta;
};
LayerNormGrads layer_norm_backward(std::span<const float> dy, std::span<const float> gamma,
                                   std::span<const float> xhat, std::span<const float> rstd);

}  // namespace fmtcheck::train
