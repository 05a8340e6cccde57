// The bundled digits data (scikit-learn's digits.csv.gz, 1797 8×8 images)
// and the MLP trained on it: 64-32-10, ReLU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fmtcheck/train/model.hpp"

namespace fmtcheck::train {

struct Digits {
  std::vector<float> pixels;  // 64 per image, value / 16 in [0, 1]
  std::vector<int> labels;    // 0..9
  [[nodiscard]] std::size_t count() const { return labels.size(); }
};

// Lines of 64 pixel values 0..16 and a label 0..9. Throws
// std::invalid_argument naming the line of anything else.
Digits parse_digits_csv(std::string_view text);
// The CSV, gzip-compressed or plain.
Digits read_digits(const std::string& path);
// Images [first, first + count).
Digits slice(const Digits& d, std::size_t first, std::size_t count);
// The first 1500 images train, the rest (297 of the bundled 1797) evaluate.
// Throws std::invalid_argument when the data has no image left to evaluate.
using DigitsSplit = Split<Digits>;
inline DigitsSplit split_digits(const Digits& all) { return split_examples(all, 1500, "the digits data"); }

// Images [first, first + rows) of `from`, wrapping around.
struct Batch {
  std::vector<float> x;
  std::vector<int> labels;
};
Batch take_batch(const Digits& from, std::size_t first, std::size_t rows);

class DigitsMlp final : public Model {
 public:
  static constexpr std::size_t inputs = 64, hidden = 32, classes = 10;
  // fc1's weight, fc1's bias, fc2's weight, fc2's bias drawn in this order
  // by uniform_init. Keeps references to the data.
  DigitsMlp(const Digits& train, const Digits& held_out, std::uint64_t seed);
  LossResult train_batch(Autocast& ac, std::size_t index, std::size_t batch, float loss_scale) override;
  Evaluation evaluate(Autocast& ac) override;
  std::vector<Parameter*> parameters() override { return {&fc1_.weight, &fc1_.bias, &fc2_.weight, &fc2_.bias}; }
  [[nodiscard]] double step_multiply_adds(std::size_t batch) const override;
  [[nodiscard]] SavedActivations saved_activations(std::size_t batch) const override;

 private:
  LossResult forward_backward(Autocast& ac, const Batch& batch, float loss_scale);
  const Digits& train_;
  const Digits& held_out_;
  std::uint64_t position_ = 0;  // initialiser draws; declared before the layers it initialises
  Linear fc1_, fc2_;
};

}  // namespace fmtcheck::train
