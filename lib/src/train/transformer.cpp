#include "fmtcheck/train/transformer.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "fmtcheck/train/exact_math.hpp"
#include "fmtcheck/train/normalize.hpp"

namespace fmtcheck::train {
namespace {

constexpr std::size_t L = SortTask::length, C = SortTransformer::context, W = SortTransformer::width,
                      H = SortTransformer::heads, HS = SortTransformer::head_size;
constexpr float score_scale = 0.25f;  // 1/sqrt(head_size), a power of two
static_assert(HS == 16);

std::vector<float> add(std::span<const float> a, std::span<const float> b) {
  std::vector<float> y(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) y[i] = a[i] + b[i];
  return y;
}

// Column block [first, first + count) of a rows×cols matrix.
std::vector<float> columns(std::span<const float> x, std::size_t rows, std::size_t cols, std::size_t first,
                           std::size_t count, std::size_t row0) {
  std::vector<float> out(rows * count);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < count; ++c) out[r * count + c] = x[(row0 + r) * cols + first + c];
  }
  return out;
}

void put_columns(std::span<float> x, std::size_t cols, std::size_t first, std::span<const float> block, std::size_t count,
                 std::size_t row0) {
  for (std::size_t r = 0; r < block.size() / count; ++r) {
    for (std::size_t c = 0; c < count; ++c) x[(row0 + r) * cols + first + c] = block[r * count + c];
  }
}

}  // namespace

SortTask parse_sort_task(std::string_view text) {
  SortTask t;
  for (const IntegerLine& line : parse_integer_lines(text, "sort task")) {
    const std::string where = "sort task line " + std::to_string(line.number);
    if (line.values.size() != SortTask::tokens) {
      throw std::invalid_argument(where + ": expected 6 tokens, the separator 8 and 6 tokens");
    }
    for (std::size_t i = 0; i < SortTask::tokens; ++i) {
      const int v = line.values[i];
      const bool separator = i == L;
      if (separator ? v != static_cast<int>(SortTask::separator) : v < 0 || v >= static_cast<int>(SortTask::separator)) {
        throw std::invalid_argument(where + ": '" + std::to_string(v) +
                                    (separator ? "' is not the separator 8" : "' is not a token 0..7"));
      }
    }
    t.sequences.insert(t.sequences.end(), line.values.begin(), line.values.end());
  }
  return t;
}

SortTask read_sort_task(const std::string& path) { return parse_sort_task(read_text(path, "sort task")); }

SortTask slice(const SortTask& t, std::size_t first, std::size_t count) {
  return {rows_of(t.sequences, SortTask::tokens, first, count)};
}

LayerNorm::LayerNorm(std::string name, std::size_t width)
    : gamma{name + ".gamma", std::vector<float>(width, 1.0f), std::vector<float>(width)},
      beta{name + ".beta", std::vector<float>(width, 0.0f), std::vector<float>(width)} {}

std::vector<float> LayerNorm::forward(std::span<const float> x) {
  LayerNormResult r = layer_norm(x, gamma.value, beta.value, 1e-5f);
  xhat_ = std::move(r.xhat);
  rstd_ = std::move(r.rstd);
  return std::move(r.y);
}

std::vector<float> LayerNorm::backward(std::span<const float> dy) {
  LayerNormGrads g = layer_norm_backward(dy, gamma.value, xhat_, rstd_);
  gamma.grad = std::move(g.dgamma);
  beta.grad = std::move(g.dbeta);
  return std::move(g.dx);
}

SortTransformer::SortTransformer(const SortTask& train, const SortTask& held_out, std::uint64_t seed)
    : train_(train),
      held_out_(held_out),
      token_embedding_{"embedding.token", uniform_init(seed, position_, W, SortTask::vocabulary * W),
                       std::vector<float>(SortTask::vocabulary * W)},
      position_embedding_{"embedding.position", uniform_init(seed, position_, W, C * W), std::vector<float>(C * W)},
      ln1_("ln1", W),
      ln2_("ln2", W),
      ln_final_("ln_final", W),
      qkv_("attn.qkv", W, 3 * W, seed, position_),
      proj_("attn.proj", W, W, seed, position_),
      fc1_("mlp.fc1", W, hidden, seed, position_),
      fc2_("mlp.fc2", hidden, W, seed, position_),
      head_("head", W, SortTask::vocabulary, seed, position_) {}

std::vector<Parameter*> SortTransformer::parameters() {
  return {&token_embedding_, &position_embedding_, &ln1_.gamma, &ln1_.beta, &qkv_.weight, &qkv_.bias,
          &proj_.weight,     &proj_.bias,          &ln2_.gamma, &ln2_.beta, &fc1_.weight, &fc1_.bias,
          &fc2_.weight,      &fc2_.bias,           &ln_final_.gamma, &ln_final_.beta, &head_.weight, &head_.bias};
}

double SortTransformer::step_multiply_adds(std::size_t batch) const {
  const auto rows = static_cast<double>(batch * C);
  const double linear = rows * (W * 3 * W + W * W + W * hidden + hidden * W) + static_cast<double>(batch * L) * W *
                                                                                 static_cast<double>(SortTask::vocabulary);
  const double attention = static_cast<double>(batch * H) * C * C * HS;
  // Each Linear: forward, dx and dW; attention: 2 GEMMs forward, 4 backward.
  return 3 * linear + 6 * attention;
}

SavedActivations SortTransformer::saved_activations(std::size_t batch) const {
  const auto rows = static_cast<double>(batch * C), predicted = static_cast<double>(batch * L);
  const double probs = static_cast<double>(batch * H * C * C);
  // GEMM inputs: qkv, proj, fc1, fc2 per position, head per predicted one.
  // Activations: qkv's output (Q, K, V), the probabilities P·V reads, fc1's
  // output. Float32: each layer norm's xhat and rstd, the softmax's
  // probabilities, the loss's probabilities.
  return {rows * (W + W + W + hidden) + predicted * W, rows * (3 * W + hidden) + probs,
          rows * 3 * (W + 1) + probs + predicted * static_cast<double>(SortTask::vocabulary)};
}

std::vector<float> SortTransformer::attention(Autocast& ac, std::span<const float> qkv) {
  std::vector<float> out(sequences_ * C * W);
  probs_.assign(sequences_ * H * C * C, 0.0f);
  probs_act_.resize(probs_.size());
  for (std::size_t b = 0; b < sequences_; ++b) {
    for (std::size_t h = 0; h < H; ++h) {
      const std::vector<float> q = columns(qkv, C, 3 * W, h * HS, HS, b * C);
      const std::vector<float> k = columns(qkv, C, 3 * W, W + h * HS, HS, b * C);
      const std::vector<float> v = columns(qkv, C, 3 * W, 2 * W + h * HS, HS, b * C);
      const std::vector<float> scores = ac.activation_matmul("attn.scores", q, k, C, C, HS);
      std::vector<float> scaled(C * C, -std::numeric_limits<float>::infinity());
      for (std::size_t t = 0; t < C; ++t) {  // causal: position t sees 0..t
        for (std::size_t j = 0; j <= t; ++j) scaled[t * C + j] = scores[t * C + j] * score_scale;
      }
      const std::vector<float> probs = softmax_rows(scaled, C);
      float* p = &probs_[(b * H + h) * C * C];
      std::copy(probs.begin(), probs.end(), p);
      const std::vector<float> pa = ac.to_activation("attn.probs", {p, p + C * C});
      std::copy(pa.begin(), pa.end(), probs_act_.begin() + static_cast<std::ptrdiff_t>((b * H + h) * C * C));
      const std::vector<float> o = ac.activation_matmul("attn.output", pa, transpose<float>(v, C, HS), C, HS, C);
      put_columns(out, W, h * HS, o, HS, b * C);
    }
  }
  return out;
}

std::vector<float> SortTransformer::attention_backward(Autocast& ac, std::span<const float> dout) {
  std::vector<float> dqkv(sequences_ * C * 3 * W);
  for (std::size_t b = 0; b < sequences_; ++b) {
    for (std::size_t h = 0; h < H; ++h) {
      const std::vector<float> q = columns(qkv_out_, C, 3 * W, h * HS, HS, b * C);
      const std::vector<float> k = columns(qkv_out_, C, 3 * W, W + h * HS, HS, b * C);
      const std::vector<float> v = columns(qkv_out_, C, 3 * W, 2 * W + h * HS, HS, b * C);
      const std::vector<float> dout_bh = columns(dout, C, W, h * HS, HS, b * C);
      const std::span<const float> p(&probs_[(b * H + h) * C * C], C * C);
      const std::span<const float> pa(&probs_act_[(b * H + h) * C * C], C * C);
      const std::vector<float> dp = ac.activation_matmul("attn.grad_probs", dout_bh, v, C, C, HS);
      const std::vector<float> dv = ac.activation_matmul("attn.grad_values", transpose<float>(pa, C, C),
                                                         transpose<float>(dout_bh, C, HS), C, HS, C);
      // torch's softmax backward, then the score scale.
      std::vector<float> ds = softmax_rows_backward(p, dp, C);
      for (float& d : ds) d *= score_scale;
      const std::vector<float> dsa = ac.to_activation("attn.grad_scores", std::move(ds));
      const std::vector<float> dq = ac.activation_matmul("attn.grad_query", dsa, transpose<float>(k, C, HS), C, HS, C);
      const std::vector<float> dk = ac.activation_matmul("attn.grad_key", transpose<float>(dsa, C, C),
                                                         transpose<float>(q, C, HS), C, HS, C);
      put_columns(dqkv, 3 * W, h * HS, dq, HS, b * C);
      put_columns(dqkv, 3 * W, W + h * HS, dk, HS, b * C);
      put_columns(dqkv, 3 * W, 2 * W + h * HS, dv, HS, b * C);
    }
  }
  return dqkv;
}

std::vector<float> SortTransformer::forward(Autocast& ac, const std::vector<int>& sequences, std::vector<int>& targets) {
  sequences_ = sequences.size() / SortTask::tokens;
  const std::size_t rows = sequences_ * C;
  inputs_.resize(rows);
  std::vector<float> x(rows * W);
  for (std::size_t b = 0; b < sequences_; ++b) {
    for (std::size_t t = 0; t < C; ++t) {
      const auto token = static_cast<std::size_t>(sequences[b * SortTask::tokens + t]);
      inputs_[b * C + t] = static_cast<int>(token);
      for (std::size_t c = 0; c < W; ++c) {
        x[(b * C + t) * W + c] = token_embedding_.value[token * W + c] + position_embedding_.value[t * W + c];
      }
    }
  }
  qkv_out_ = qkv_.forward(ac, ln1_.forward(x), rows);
  const std::vector<float> x2 = add(x, proj_.forward(ac, attention(ac, qkv_out_), rows));
  fc1_out_ = fc1_.forward(ac, ln2_.forward(x2), rows);
  const std::vector<float> x3 = add(x2, fc2_.forward(ac, relu(fc1_out_), rows));
  const std::vector<float> hf = ln_final_.forward(x3);
  // The separator and the positions after it predict the sorted tokens.
  std::vector<float> predicting;
  targets.clear();
  for (std::size_t b = 0; b < sequences_; ++b) {
    for (std::size_t t = L; t < C; ++t) {
      predicting.insert(predicting.end(), hf.begin() + static_cast<std::ptrdiff_t>((b * C + t) * W),
                        hf.begin() + static_cast<std::ptrdiff_t>((b * C + t + 1) * W));
      targets.push_back(sequences[b * SortTask::tokens + t + 1]);
    }
  }
  return head_.forward(ac, predicting, targets.size());
}

void SortTransformer::backward(Autocast& ac, std::span<const float> dlogits) {
  const std::vector<float> dpredicting = head_.backward(ac, dlogits, true);
  std::vector<float> dhf(sequences_ * C * W, 0.0f);
  for (std::size_t b = 0, i = 0; b < sequences_; ++b) {
    for (std::size_t t = L; t < C; ++t, ++i) {
      std::copy_n(dpredicting.begin() + static_cast<std::ptrdiff_t>(i * W), W,
                  dhf.begin() + static_cast<std::ptrdiff_t>((b * C + t) * W));
    }
  }
  // A residual add's gradient reaches its branch's Linear in the activation
  // format (torch autocast: the Linear's output was in it, and autograd casts
  // a gradient to its tensor's dtype), the residual stream's in float32.
  const std::vector<float> dx3 = ln_final_.backward(dhf);
  const std::vector<float> dfc1 =
      relu_backward(fc1_out_, fc2_.backward(ac, ac.to_activation("mlp.fc2.output.grad", dx3), true));
  const std::vector<float> dx2 = add(dx3, ln2_.backward(fc1_.backward(ac, dfc1, true)));
  const std::vector<float> dqkv =
      attention_backward(ac, proj_.backward(ac, ac.to_activation("attn.proj.output.grad", dx2), true));
  const std::vector<float> dx = add(dx2, ln1_.backward(qkv_.backward(ac, dqkv, true)));
  std::fill(token_embedding_.grad.begin(), token_embedding_.grad.end(), 0.0f);
  std::fill(position_embedding_.grad.begin(), position_embedding_.grad.end(), 0.0f);
  for (std::size_t r = 0; r < inputs_.size(); ++r) {
    const auto token = static_cast<std::size_t>(inputs_[r]);
    for (std::size_t c = 0; c < W; ++c) {
      token_embedding_.grad[token * W + c] += dx[r * W + c];
      position_embedding_.grad[(r % C) * W + c] += dx[r * W + c];
    }
  }
}

LossResult SortTransformer::train_batch(Autocast& ac, std::size_t index, std::size_t batch, float loss_scale) {
  std::vector<int> sequences(batch * SortTask::tokens);
  for (std::size_t i = 0; i < batch; ++i) {
    const std::size_t s = (index * batch + i) % train_.count();
    std::copy_n(train_.sequences.begin() + static_cast<std::ptrdiff_t>(s * SortTask::tokens), SortTask::tokens,
                sequences.begin() + static_cast<std::ptrdiff_t>(i * SortTask::tokens));
  }
  std::vector<int> targets;
  const std::vector<float> logits = forward(ac, sequences, targets);
  LossResult r = softmax_cross_entropy(logits, targets, SortTask::vocabulary, loss_scale);
  backward(ac, ac.to_activation("logits.grad", r.grad));
  return r;
}

Evaluation SortTransformer::evaluate(Autocast& ac) {
  std::vector<int> targets;
  const std::vector<float> logits = forward(ac, held_out_.sequences, targets);
  const LossResult r = softmax_cross_entropy(logits, targets, SortTask::vocabulary, 1.0f);
  return {r.loss, static_cast<double>(r.correct) / static_cast<double>(targets.size())};
}

}  // namespace fmtcheck::train
