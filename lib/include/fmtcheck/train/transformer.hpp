// A small decoder-only transformer on the bundled token task (sorting six
// tokens, data/sort/sort.csv.gz), so that attention scores, softmax and
// layer norm meet low precision as in real models.
//
// Token and position embeddings (float32) feed one pre-norm block:
// x += proj(attention(qkv(LN1(x)))), x += fc2(relu(fc1(LN2(x)))); then a
// final LN and the head, whose logits at the separator and after it predict
// the sorted tokens (the loss covers only those). Attention is causal, per
// head, scores scaled by 1/sqrt(head size) = 1/4 (exact), softmax in float32.
// Under autocast the Linear layers follow the recipe; the attention GEMMs
// (Q·Kᵀ, P·V and their gradients) run in the activation format; embeddings,
// layer norm, softmax, residual adds and the loss stay in float32, as torch
// autocast and Transformer Engine do.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fmtcheck/train/model.hpp"

namespace fmtcheck::train {

struct SortTask {
  static constexpr std::size_t length = 6, vocabulary = 9, separator = 8;
  static constexpr std::size_t tokens = 2 * length + 1;  // input, separator, sorted
  std::vector<int> sequences;                           // `tokens` per sequence
  [[nodiscard]] std::size_t count() const { return sequences.size() / tokens; }
};

// Lines of 13 integers: six tokens 0..7, the separator 8, six tokens 0..7.
// Throws std::invalid_argument naming the line of anything else.
SortTask parse_sort_task(std::string_view text);
SortTask read_sort_task(const std::string& path);
SortTask slice(const SortTask& t, std::size_t first, std::size_t count);
// The first 1800 sequences train, the rest (200 of the bundled 2000)
// evaluate; throws std::invalid_argument when none is left to evaluate.
using SortSplit = Split<SortTask>;
inline SortSplit split_sort_task(const SortTask& all) { return split_examples(all, 1800, "the sort task"); }

// float32 layer norm over the last dimension, eps 1e-5 (normalize.hpp), with
// its parameters; backward sets their gradients.
class LayerNorm {
 public:
  explicit LayerNorm(std::string name, std::size_t width);
  std::vector<float> forward(std::span<const float> x);
  std::vector<float> backward(std::span<const float> dy);
  Parameter gamma, beta;

 private:
  std::vector<float> xhat_, rstd_;
};

class SortTransformer final : public Model {
 public:
  static constexpr std::size_t width = 32, heads = 2, head_size = width / heads, hidden = 64;
  static constexpr std::size_t context = SortTask::tokens - 1;  // positions fed in
  // Parameters drawn by uniform_init in this order: token embedding,
  // position embedding (both fan-in `width`), qkv, proj, fc1, fc2, head
  // (weight then bias each); layer norms start at gamma 1, beta 0.
  SortTransformer(const SortTask& train, const SortTask& held_out, std::uint64_t seed);
  LossResult train_batch(Autocast& ac, std::size_t index, std::size_t batch, float loss_scale) override;
  Evaluation evaluate(Autocast& ac) override;
  std::vector<Parameter*> parameters() override;
  [[nodiscard]] double step_multiply_adds(std::size_t batch) const override;
  [[nodiscard]] SavedActivations saved_activations(std::size_t batch) const override;

 private:
  // The logits of the predicted positions (batch·length rows) and their targets.
  std::vector<float> forward(Autocast& ac, const std::vector<int>& sequences, std::vector<int>& targets);
  void backward(Autocast& ac, std::span<const float> dlogits);
  std::vector<float> attention(Autocast& ac, std::span<const float> qkv);
  std::vector<float> attention_backward(Autocast& ac, std::span<const float> dout);

  const SortTask& train_;
  const SortTask& held_out_;
  std::uint64_t position_ = 0;  // initialiser draws; declared before what it initialises
  Parameter token_embedding_, position_embedding_;
  LayerNorm ln1_, ln2_, ln_final_;
  Linear qkv_, proj_, fc1_, fc2_, head_;
  // Saved by forward for backward.
  std::size_t sequences_ = 0;
  std::vector<int> inputs_;
  std::vector<float> qkv_out_, probs_, probs_act_, fc1_out_;
};

}  // namespace fmtcheck::train
