#include "fmtcheck/train/normalize.hpp"

#include <algorithm>
#include <cmath>

#include "fmtcheck/train/exact_math.hpp"

namespace fmtcheck::train {

std::vector<float> softmax_rows(std::span<const float> x, std::size_t cols) {
  std::vector<float> p(x.size());
  for (std::size_t r = 0; r < x.size() / cols; ++r) {
    const float* v = &x[r * cols];
    float* out = &p[r * cols];
    float top = v[0];
    for (std::size_t j = 1; j < cols; ++j) top = std::max(top, v[j]);
    float sum = 0.0f;
    for (std::size_t j = 0; j < cols; ++j) {
      out[j] = exp_f32(v[j] - top);
      sum += out[j];
    }
    for (std::size_t j = 0; j < cols; ++j) out[j] = out[j] / sum;
  }
  return p;
}

std::vector<float> softmax_rows_backward(std::span<const float> p, std::span<const float> dp, std::size_t cols) {
  std::vector<float> dx(p.size());
  for (std::size_t r = 0; r < p.size() / cols; ++r) {
    const std::size_t o = r * cols;
    float dot = 0.0f;
    for (std::size_t j = 0; j < cols; ++j) dot += dp[o + j] * p[o + j];
    for (std::size_t j = 0; j < cols; ++j) dx[o + j] = p[o + j] * (dp[o + j] - dot);
  }
  return dx;
}

LayerNormResult layer_norm(std::span<const float> x, std::span<const float> gamma, std::span<const float> beta,
                           float eps) {
  const std::size_t width = gamma.size(), rows = x.size() / width;
  const auto d = static_cast<float>(width);
  LayerNormResult out{std::vector<float>(x.size()), std::vector<float>(x.size()), std::vector<float>(rows)};
  for (std::size_t r = 0; r < rows; ++r) {
    const float* v = &x[r * width];
    float sum = 0.0f;
    for (std::size_t c = 0; c < width; ++c) sum += v[c];
    const float mean = sum / d;
    float squares = 0.0f;
    for (std::size_t c = 0; c < width; ++c) squares += (v[c] - mean) * (v[c] - mean);
    const float rstd = 1.0f / std::sqrt(squares / d + eps);
    out.rstd[r] = rstd;
    for (std::size_t c = 0; c < width; ++c) {
      const float xhat = (v[c] - mean) * rstd;
      out.xhat[r * width + c] = xhat;
      out.y[r * width + c] = xhat * gamma[c] + beta[c];
    }
  }
  return out;
}

LayerNormGrads layer_norm_backward(std::span<const float> dy, std::span<const float> gamma,
                                   std::span<const float> xhat, std::span<const float> rstd) {
  const std::size_t width = gamma.size(), rows = dy.size() / width;
  const auto d = static_cast<float>(width);
  LayerNormGrads out{std::vector<float>(dy.size()), std::vector<float>(width, 0.0f), std::vector<float>(width, 0.0f)};
  std::vector<float> g(width);
  for (std::size_t r = 0; r < rows; ++r) {
    const float* xh = &xhat[r * width];
    float sum_g = 0.0f, sum_gx = 0.0f;
    for (std::size_t c = 0; c < width; ++c) {
      const float v = dy[r * width + c];
      g[c] = v * gamma[c];
      out.dgamma[c] += v * xh[c];
      out.dbeta[c] += v;
      sum_g += g[c];
      sum_gx += g[c] * xh[c];
    }
    const float mean_g = sum_g / d, mean_gx = sum_gx / d;
    for (std::size_t c = 0; c < width; ++c) out.dx[r * width + c] = ((g[c] - mean_g) - xh[c] * mean_gx) * rstd[r];
  }
  return out;
}

}  // namespace fmtcheck::train
