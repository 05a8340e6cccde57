// What the trainer asks of a model: a forward and backward pass on a
// training batch, an evaluation on held-out data, and its parameters.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "fmtcheck/train/layers.hpp"

namespace fmtcheck::train {

struct Evaluation {
  float loss = 0;
  double accuracy = 0;  // fraction of predictions (images, tokens) that are right
};

// Elements a training step saves for backward, by the format they live in.
struct SavedActivations {
  double gemm_inputs = 0;  // a Linear's input, kept as its cast GEMM operand
  double activations = 0;  // GEMM outputs kept for an elementwise backward (ReLU, attention)
  double float32 = 0;      // layer norm, softmax and loss: float32 under every recipe
};

class Model {
 public:
  virtual ~Model() = default;
  // Forward and backward on training examples [index·batch, (index + 1)·batch)
  // (wrapping) under `ac`, the loss multiplied by loss_scale; sets every
  // parameter's gradient and returns the unscaled loss.
  virtual LossResult train_batch(Autocast& ac, std::size_t index, std::size_t batch, float loss_scale) = 0;
  // The loss and accuracy of a forward pass on the held-out examples.
  virtual Evaluation evaluate(Autocast& ac) = 0;
  virtual std::vector<Parameter*> parameters() = 0;
  // Multiply-adds of one training step's GEMMs (forward and backward).
  [[nodiscard]] virtual double step_multiply_adds(std::size_t batch) const = 0;
  // What one training step of `batch` examples saves for its backward pass.
  [[nodiscard]] virtual SavedActivations saved_activations(std::size_t batch) const = 0;
};

// Reads a text file, gzip-compressed or plain; throws std::invalid_argument.
std::string read_text(const std::string& path, const std::string& what);

// The non-empty lines of comma-separated integers in `text` (the bundled
// data sets), with their line numbers. Throws std::invalid_argument
// "WHAT line N: 'FIELD' is not an integer" for anything else, or when no
// line is there.
// Values [first·width, (first + count)·width) of v, a row of `width` per example.
template <typename T>
std::vector<T> rows_of(const std::vector<T>& v, std::size_t width, std::size_t first, std::size_t count) {
  return {v.begin() + static_cast<std::ptrdiff_t>(first * width),
          v.begin() + static_cast<std::ptrdiff_t>((first + count) * width)};
}

// A data set's first `train` examples, which train, and the rest, which
// evaluate; Data has count() and a slice(data, first, count).
template <typename Data>
struct Split {
  Data train, held_out;
};
template <typename Data>
Split<Data> split_examples(const Data& all, std::size_t train, const std::string& what) {
  if (all.count() <= train) {
    throw std::invalid_argument(what + " has " + std::to_string(all.count()) + " examples; training takes the first " +
                                std::to_string(train) + " and evaluates on the rest");
  }
  return {slice(all, 0, train), slice(all, train, all.count() - train)};
}

struct IntegerLine {
  std::size_t number = 0;
  std::vector<int> values;
};
std::vector<IntegerLine> parse_integer_lines(std::string_view text, const std::string& what);

}  // namespace fmtcheck::train
