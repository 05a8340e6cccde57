// The training step, written once for every TensorOps, and the emulator's
// TensorOps. See train.hpp for what runs where.
#include "fmtcheck/cuda/train.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "fmtcheck/core/convert.hpp"
#include "fmtcheck/core/decode.hpp"
#include "fmtcheck/core/random.hpp"
#include "fmtcheck/cuda/convert.hpp"
#include "fmtcheck/tensor_core/gemm.hpp"

namespace fmtcheck::cuda {
namespace {

std::size_t round_up(std::size_t v, std::size_t to) { return (v + to - 1) / to * to; }

std::vector<std::uint32_t> transpose(std::span<const std::uint32_t> x, std::size_t rows, std::size_t cols) {
  std::vector<std::uint32_t> t(x.size());
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < cols; ++c) t[c * rows + r] = x[r * cols + c];
  }
  return t;
}

std::vector<std::uint32_t> pad(std::span<const std::uint32_t> x, std::size_t rows, std::size_t cols,
                               std::size_t to_rows, std::size_t to_cols) {
  std::vector<std::uint32_t> p(to_rows * to_cols, 0);
  for (std::size_t r = 0; r < rows; ++r) std::copy_n(x.begin() + r * cols, cols, p.begin() + r * to_cols);
  return p;
}

// m×n = (m×k)·(k×n) through ops, zero-padded to the tile and cropped back.
std::vector<float> product(TensorOps& ops, const Format& h, std::size_t m, std::size_t n, std::size_t k,
                           std::span<const std::uint32_t> a, std::span<const std::uint32_t> b) {
  const std::size_t pm = round_up(m, 16), pn = round_up(n, 8), pk = round_up(k, 16);
  const std::vector<float> d = ops.gemm(h, pm, pn, pk, pad(a, m, k, pm, pk), pad(b, k, n, pk, pn));
  std::vector<float> out(m * n);
  for (std::size_t r = 0; r < m; ++r) std::copy_n(d.begin() + r * pn, n, out.begin() + r * n);
  return out;
}

// Scaled gradients rounded to the half format: the ones that vanished or overflowed.
std::vector<std::uint32_t> gradient_to_half(TensorOps& ops, const Format& h, std::span<const float> g, StepResult& r) {
  std::vector<std::uint32_t> bits = ops.to_half(h, g);
  for (std::size_t i = 0; i < g.size(); ++i) {
    const double v = to_double(h, bits[i]);
    if (g[i] != 0.0f && std::isfinite(g[i]) && v == 0.0) ++r.underflow;
    if (std::isfinite(g[i]) && std::isinf(v)) ++r.overflow;
  }
  return bits;
}

// Column sums of a rows×cols matrix, rows in order.
std::vector<float> column_sums(std::span<const float> x, std::size_t rows, std::size_t cols) {
  std::vector<float> s(cols, 0.0f);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < cols; ++c) s[c] += x[r * cols + c];
  }
  return s;
}

bool all_finite(std::span<const float> x) {
  return std::all_of(x.begin(), x.end(), [](float v) { return std::isfinite(v); });
}

}  // namespace

Digits parse_digits_csv(std::string_view text) {
  Digits d;
  std::size_t line_number = 0;
  std::istringstream in{std::string(text)};
  for (std::string line; std::getline(in, line);) {
    ++line_number;
    if (line.empty()) continue;
    std::istringstream fields(line);
    std::vector<int> values;
    for (std::string field; std::getline(fields, field, ',');) {
      std::size_t used = 0;
      int v = -1;
      try {
        v = std::stoi(field, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != field.size() || v < 0 || v > 16) {
        throw std::invalid_argument("digits CSV line " + std::to_string(line_number) + ": '" + field +
                                    "' is not an integer 0..16");
      }
      values.push_back(v);
    }
    if (values.size() != Mlp::inputs + 1 || values.back() > 9) {
      throw std::invalid_argument("digits CSV line " + std::to_string(line_number) +
                                  ": expected 64 pixel values and a label 0..9");
    }
    for (std::size_t i = 0; i < Mlp::inputs; ++i) d.pixels.push_back(static_cast<float>(values[i]) / 16.0f);
    d.labels.push_back(values.back());
  }
  if (d.count() == 0) throw std::invalid_argument("digits CSV: no images");
  return d;
}

Digits read_digits_csv(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::invalid_argument("cannot read digits CSV '" + path + "'");
  std::ostringstream text;
  text << f.rdbuf();
  return parse_digits_csv(text.str());
}

Mlp initial_mlp(std::uint64_t seed) {
  std::uint64_t position = 0;
  auto uniform = [&](std::size_t fan_in) {
    const float bound = 1.0f / std::sqrt(static_cast<float>(fan_in));
    const double u = static_cast<double>(splitmix64(seed, position++) >> 11) * 0x1.0p-53;  // [0, 1)
    return static_cast<float>((2.0 * u - 1.0) * bound);
  };
  Mlp m;
  auto fill = [&](std::vector<float>& v, std::size_t size, std::size_t fan_in) {
    v.resize(size);
    for (float& x : v) x = uniform(fan_in);
  };
  fill(m.w1, Mlp::hidden * Mlp::inputs, Mlp::inputs);
  fill(m.b1, Mlp::hidden, Mlp::inputs);
  fill(m.w2, Mlp::classes * Mlp::hidden, Mlp::hidden);
  fill(m.b2, Mlp::classes, Mlp::hidden);
  return m;
}

StepResult train_step(TensorOps& ops, const TrainConfig& config, const Digits& data, std::size_t first, Mlp& mlp,
                      GradScaler& scaler) {
  const Format& h = *config.half;
  if (h != formats::fp16 && h != formats::bf16) throw std::invalid_argument("train: the half format is fp16 or bf16");
  if (config.batch == 0 || config.batch % 16 != 0) throw std::invalid_argument("train: the batch is a multiple of 16");
  constexpr std::size_t in = Mlp::inputs, hid = Mlp::hidden, cls = Mlp::classes;
  const std::size_t batch = config.batch;
  StepResult r;
  r.scale = static_cast<float>(scaler.scale());  // a power of two: exact

  std::vector<float> x(batch * in);
  std::vector<int> y(batch);
  for (std::size_t i = 0; i < batch; ++i) {
    const std::size_t image = (first + i) % data.count();
    std::copy_n(data.pixels.begin() + image * in, in, x.begin() + i * in);
    y[i] = data.labels[image];
  }

  // Forward: half operands, fp32 results.
  const std::vector<std::uint32_t> xh = ops.to_half(h, x);
  const std::vector<std::uint32_t> w1h = ops.to_half(h, mlp.w1), w2h = ops.to_half(h, mlp.w2);
  std::vector<float> z1 = product(ops, h, batch, hid, in, xh, transpose(w1h, hid, in));
  std::vector<float> act(z1.size());
  for (std::size_t i = 0; i < z1.size(); ++i) {
    z1[i] += mlp.b1[i % hid];
    act[i] = z1[i] > 0.0f ? z1[i] : 0.0f;
  }
  const std::vector<std::uint32_t> acth = ops.to_half(h, act);
  std::vector<float> logits = product(ops, h, batch, cls, hid, acth, transpose(w2h, cls, hid));

  // Softmax cross-entropy, mean over the batch; its gradient times the scale.
  std::vector<float> g(batch * cls);
  float loss_sum = 0.0f;
  for (std::size_t i = 0; i < batch; ++i) {
    float* l = &logits[i * cls];
    for (std::size_t c = 0; c < cls; ++c) l[c] += mlp.b2[c];
    const float top = *std::max_element(l, l + cls);
    float sum = 0.0f;
    for (std::size_t c = 0; c < cls; ++c) sum += std::exp(l[c] - top);
    loss_sum += std::log(sum) - (l[y[i]] - top);
    for (std::size_t c = 0; c < cls; ++c) {
      const float p = std::exp(l[c] - top) / sum;
      g[i * cls + c] = (p - (static_cast<int>(c) == y[i] ? 1.0f : 0.0f)) / static_cast<float>(batch) * r.scale;
    }
  }
  r.loss = loss_sum / static_cast<float>(batch);

  // Backward: scaled gradients in half, weight gradients in fp32.
  const std::vector<std::uint32_t> gh = gradient_to_half(ops, h, g, r);
  const std::vector<float> dw2 = product(ops, h, cls, hid, batch, transpose(gh, batch, cls), acth);
  const std::vector<float> db2 = column_sums(g, batch, cls);
  std::vector<float> dz1 = product(ops, h, batch, hid, cls, gh, w2h);
  for (std::size_t i = 0; i < dz1.size(); ++i) dz1[i] = z1[i] > 0.0f ? dz1[i] : 0.0f;
  const std::vector<std::uint32_t> dz1h = gradient_to_half(ops, h, dz1, r);
  const std::vector<float> dw1 = product(ops, h, hid, in, batch, transpose(dz1h, batch, hid), xh);
  const std::vector<float> db1 = column_sums(dz1, batch, hid);

  // GradScaler: skip and back off on inf/NaN, else unscale, update, maybe grow.
  const bool found_inf = !(all_finite(dw1) && all_finite(db1) && all_finite(dw2) && all_finite(db2));
  r.skipped = scaler.update(found_inf);
  if (r.skipped) return r;
  const auto inverse = static_cast<float>(1.0 / static_cast<double>(r.scale));
  for (auto [w, grad] : {std::pair{&mlp.w1, &dw1}, std::pair{&mlp.b1, &db1}, std::pair{&mlp.w2, &dw2},
                         std::pair{&mlp.b2, &db2}}) {
    for (std::size_t i = 0; i < w->size(); ++i) {
      const float unscaled = (*grad)[i] * inverse;
      const float step = config.learning_rate * unscaled;
      (*w)[i] -= step;
    }
  }
  return r;
}

void check_tile_gemm(const Format& half, std::size_t m, std::size_t n, std::size_t k, std::span<const std::uint32_t> a,
                     std::span<const std::uint32_t> b) {
  if (half != formats::fp16 && half != formats::bf16) throw std::invalid_argument("tile GEMM: fp16 or bf16 only");
  if (m == 0 || n == 0 || k == 0 || m % 16 != 0 || n % 8 != 0 || k % 16 != 0) {
    throw std::invalid_argument("tile GEMM: M, N, K must be positive multiples of 16, 8, 16");
  }
  if (a.size() != m * k || b.size() != k * n) throw std::invalid_argument("tile GEMM: A or B has the wrong size");
}

std::vector<std::uint32_t> EmulatedOps::to_half(const Format& half, std::span<const float> x) {
  const Policy p = find_device_conversion(half, Rounding::rne)->policy();
  std::vector<std::uint32_t> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) out[i] = static_cast<std::uint32_t>(convert(x[i], half, p).bits);
  return out;
}

std::vector<float> EmulatedOps::gemm(const Format& half, std::size_t m, std::size_t n, std::size_t k,
                                     std::span<const std::uint32_t> a, std::span<const std::uint32_t> b) {
  check_tile_gemm(half, m, n, k, a, b);
  GemmConfig config;
  config.model = model_;
  config.input = half;
  config.threads = 1;  // small: threads would cost more than they save
  const std::vector<float> zero(m * n, 0.0f);
  std::vector<float> d(m * n);
  fmtcheck::gemm(config, m, n, k, a, b, zero, d);
  return d;
}

}  // namespace fmtcheck::cuda
