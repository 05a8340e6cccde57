#include "fmtcheck/train/autocast.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "fmtcheck/analysis/analysis.hpp"
#include "fmtcheck/batch/convert_parallel.hpp"
#include "fmtcheck/core/decode.hpp"
#include "fmtcheck/train/exact_math.hpp"

namespace fmtcheck::train {
namespace {

float max_finite(const Format& f) { return static_cast<float>(to_double(f, f.to_storage(f.max_finite_code()))); }

}  // namespace

Quantized Quantized::transposed() const {
  return {format, transpose<std::uint32_t>(bits, rows, cols), scale_inv, cols, rows, {}};
}

float amax_of(std::span<const float> x) {
  float m = 0.0f;
  for (const float v : x) {
    if (std::isnan(v)) return v;
    m = std::max(m, std::abs(v));
  }
  return m;
}

std::vector<float> decode(const Format& f, std::span<const std::uint32_t> bits) {
  std::vector<float> out(bits.size());
  // decode_parallel (decode_batch's SIMD kernels on every core) reads
  // containers of the format's own width.
  const auto narrowed = [&](auto element) {
    const std::vector<decltype(element)> codes(bits.begin(), bits.end());
    decode_parallel(BatchSource{std::span<const decltype(element)>(codes), f}, out);
  };
  switch (f.storage_bits) {
    case 8: narrowed(std::uint8_t{}); break;
    case 16: narrowed(std::uint16_t{}); break;
    default: decode_parallel(BatchSource{bits, f}, out);
  }
  return out;
}

Autocast::Autocast(const Recipe& recipe, const RecipeOptions& options, TensorOps& ops)
    : recipe_(recipe), options_(options), ops_(ops) {}

TensorStats& Autocast::record(const std::string& name, bool accumulate) {
  for (auto& [n, s] : step_) {
    if (n != name) continue;
    if (!accumulate) throw std::logic_error("tensor '" + name + "' cast twice in one step");
    return s;
  }
  return step_.emplace_back(name, TensorStats{}).second;
}

float Autocast::scale_for(const std::string& name, const Format& format, float amax) {
  switch (recipe_.scaling) {
    case TensorScaling::none:
    case TensorScaling::mx: return 1.0f;
    case TensorScaling::current: return fp8_scale_from_amax(amax, max_finite(format), options_.margin, 1.0f);
    case TensorScaling::delayed: {
      auto it = delayed_.try_emplace(name, max_finite(format), options_.amax_history, options_.amax_compute,
                                     options_.margin).first;
      const float scale = it->second.scale();
      it->second.update(amax);  // the amax of this step's cast, for the scales of the steps after it
      return scale;
    }
  }
  return 1.0f;
}

Quantized Autocast::operand(const std::string& name, Role role, std::span<const float> x, std::size_t rows,
                            std::size_t cols) {
  const Format& f = role == Role::forward ? *recipe_.forward : *recipe_.gradient;
  TensorStats& s = record(name, false);
  s.amax = amax_of(x);
  s.scale = scale_for(name, f, s.amax);
  Quantized q{&f, {}, 1.0f, rows, cols, {}};
  if (recipe_.scaling == TensorScaling::mx) {
    // Each block of 32 along a row (the last one padded with zeros) is
    // divided by its scale 2^e, exactly, before the saturating cast.
    q.cols = (cols + mx_block - 1) / mx_block * mx_block;
    std::vector<float> scaled(rows * q.cols, 0.0f);
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t b = 0; b < q.cols; b += mx_block) {
        const std::span<const float> block = x.subspan(r * cols + b, std::min(mx_block, cols - std::min(cols, b)));
        const int e = block_scale_exponent(amax_of(block), f, BlockScaleRule::ceil);
        q.block_scales.push_back(static_cast<std::uint8_t>(e + 127));
        for (std::size_t i = 0; i < block.size(); ++i) scaled[r * q.cols + b + i] = std::ldexp(block[i], -e);
      }
    }
    q.bits = ops_.cast(f, recipe_.operand_policy, scaled, s.flags);
  } else if (s.scale == 1.0f) {
    q.bits = ops_.cast(f, recipe_.operand_policy, x, s.flags);
  } else {
    std::vector<float> scaled(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) scaled[i] = x[i] * s.scale;
    q.bits = ops_.cast(f, recipe_.operand_policy, scaled, s.flags);
    q.scale_inv = 1.0f / s.scale;  // Transformer Engine's scale_inv
  }
  return q;
}

Quantized Autocast::columnwise(const std::string& name, Role role, const Quantized& rowwise,
                               std::span<const float> source) {
  if (recipe_.scaling != TensorScaling::mx) return rowwise.transposed();
  const std::size_t source_cols = source.size() / rowwise.rows;  // rowwise.cols may be padded
  return operand(name + ".t", role, transpose<float>(source, rowwise.rows, source_cols), source_cols, rowwise.rows);
}

std::vector<float> Autocast::gemm(const Quantized& a, const Quantized& b) {
  if (a.cols != b.cols) throw std::logic_error("gemm: inner dimensions differ");
  return ops_.gemm(a.operand(), b.operand(), a.rows, b.rows, a.cols);
}

std::vector<float> Autocast::to_activation(const std::string& name, std::vector<float> x) {
  if (recipe_.activation == nullptr) return x;
  TensorStats unrecorded;
  TensorStats& s = name.empty() ? unrecorded : record(name, true);
  const float amax = amax_of(x);
  s.amax = std::isnan(s.amax) || std::isnan(amax) ? NAN : std::max(s.amax, amax);
  return decode(*recipe_.activation, ops_.cast(*recipe_.activation, activation_policy(), x, s.flags));
}

std::vector<float> Autocast::activation_matmul(const std::string& name, std::span<const float> a,
                                               std::span<const float> b, std::size_t m, std::size_t n, std::size_t k) {
  if (float32()) return matmul_fma(a, b, m, n, k);
  // Without an activation format (tf32) the bmm runs on the recipe's tensor
  // cores too, as torch's allow_tf32 sends it there, and stays float32.
  const Format& f = recipe_.activation != nullptr ? *recipe_.activation : *recipe_.forward;
  const Policy policy = recipe_.activation != nullptr ? activation_policy() : recipe_.operand_policy;
  FlagCounts unrecorded;
  const std::vector<std::uint32_t> qa = ops_.cast(f, policy, a, unrecorded);
  const std::vector<std::uint32_t> qb = ops_.cast(f, policy, b, unrecorded);
  return to_activation(name, ops_.gemm({&f, qa, 1.0f, {}}, {&f, qb, 1.0f, {}}, m, n, k));
}

}  // namespace fmtcheck::train
