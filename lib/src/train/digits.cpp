#include "fmtcheck/train/digits.hpp"

#include <array>
#include <charconv>
#include <stdexcept>
#include <zlib.h>

namespace fmtcheck::train {

Digits parse_digits_csv(std::string_view text) {
  Digits d;
  for (const IntegerLine& line : parse_integer_lines(text, "digits data")) {
    const std::string where = "digits data line " + std::to_string(line.number);
    for (const int v : line.values) {
      if (v < 0 || v > 16) throw std::invalid_argument(where + ": '" + std::to_string(v) + "' is not an integer 0..16");
    }
    if (line.values.size() != DigitsMlp::inputs + 1 || line.values.back() > 9) {
      throw std::invalid_argument(where + ": expected 64 pixel values and a label 0..9");
    }
    for (std::size_t i = 0; i < DigitsMlp::inputs; ++i) d.pixels.push_back(static_cast<float>(line.values[i]) / 16.0f);
    d.labels.push_back(line.values.back());
  }
  return d;
}

std::vector<IntegerLine> parse_integer_lines(std::string_view text, const std::string& what) {
  std::vector<IntegerLine> lines;
  std::size_t number = 0;
  while (!text.empty()) {
    const std::size_t end = std::min(text.find('\n'), text.size());
    std::string_view line = text.substr(0, end);
    text.remove_prefix(std::min(end + 1, text.size()));
    ++number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    IntegerLine parsed{number, {}};
    for (std::size_t start = 0;;) {
      const std::size_t comma = std::min(line.find(',', start), line.size());
      const std::string_view field = line.substr(start, comma - start);
      int v = 0;
      const auto [ptr, ec] = std::from_chars(field.data(), field.data() + field.size(), v);
      if (ec != std::errc{} || ptr != field.data() + field.size()) {
        throw std::invalid_argument(what + " line " + std::to_string(number) + ": '" + std::string(field) +
                                    "' is not an integer");
      }
      parsed.values.push_back(v);
      if (comma == line.size()) break;
      start = comma + 1;
    }
    lines.push_back(std::move(parsed));
  }
  if (lines.empty()) throw std::invalid_argument(what + ": no data");
  return lines;
}

std::string read_text(const std::string& path, const std::string& what) {
  // gzread reads plain files unchanged, so one path serves both.
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) throw std::invalid_argument("cannot read " + what + " '" + path + "'");
  std::string text;
  std::array<char, 1 << 16> chunk{};
  int got = 0;
  while ((got = gzread(f, chunk.data(), static_cast<unsigned>(chunk.size()))) > 0) text.append(chunk.data(), got);
  const bool failed = got < 0;
  gzclose(f);
  if (failed) throw std::invalid_argument(what + " '" + path + "' is not valid gzip");
  return text;
}

Digits read_digits(const std::string& path) { return parse_digits_csv(read_text(path, "digits data")); }

Digits slice(const Digits& d, std::size_t first, std::size_t count) {
  return {rows_of(d.pixels, DigitsMlp::inputs, first, count), rows_of(d.labels, 1, first, count)};
}

Batch take_batch(const Digits& from, std::size_t first, std::size_t rows) {
  Batch b;
  b.x.resize(rows * DigitsMlp::inputs);
  b.labels.resize(rows);
  for (std::size_t i = 0; i < rows; ++i) {
    const std::size_t image = (first + i) % from.count();
    std::copy_n(from.pixels.begin() + static_cast<std::ptrdiff_t>(image * DigitsMlp::inputs), DigitsMlp::inputs,
                b.x.begin() + static_cast<std::ptrdiff_t>(i * DigitsMlp::inputs));
    b.labels[i] = from.labels[image];
  }
  return b;
}

DigitsMlp::DigitsMlp(const Digits& train, const Digits& held_out, std::uint64_t seed)
    : train_(train),
      held_out_(held_out),
      fc1_("fc1", inputs, hidden, seed, position_),
      fc2_("fc2", hidden, classes, seed, position_) {}

LossResult DigitsMlp::train_batch(Autocast& ac, std::size_t index, std::size_t batch, float loss_scale) {
  return forward_backward(ac, take_batch(train_, index * batch, batch), loss_scale);
}

double DigitsMlp::step_multiply_adds(std::size_t batch) const {
  const auto b = static_cast<double>(batch);
  // Forward x·W1ᵀ and h·W2ᵀ; backward dW1, dW2 and dh (no dx for the input).
  return b * (inputs * hidden + hidden * classes) * 2 + b * hidden * classes;
}

SavedActivations DigitsMlp::saved_activations(std::size_t batch) const {
  const auto b = static_cast<double>(batch);
  // fc1's and fc2's inputs; fc1's output for ReLU's backward; the
  // probabilities of the float32 softmax cross-entropy.
  return {b * (inputs + hidden), b * hidden, b * classes};
}

LossResult DigitsMlp::forward_backward(Autocast& ac, const Batch& batch, float loss_scale) {
  const std::size_t rows = batch.labels.size();
  const std::vector<float> z = fc1_.forward(ac, batch.x, rows);
  const std::vector<float> logits = fc2_.forward(ac, relu(z), rows);
  LossResult r = softmax_cross_entropy(logits, batch.labels, classes, loss_scale);
  // The logits live in the activation format, so their gradient does too.
  const std::vector<float> dlogits = ac.to_activation("logits.grad", r.grad);
  const std::vector<float> dz = relu_backward(z, fc2_.backward(ac, dlogits, true));
  fc1_.backward(ac, dz, false);
  return r;
}

Evaluation DigitsMlp::evaluate(Autocast& ac) {
  const Batch all = take_batch(held_out_, 0, held_out_.count());
  const std::vector<float> logits = fc2_.forward(ac, relu(fc1_.forward(ac, all.x, all.labels.size())), all.labels.size());
  const LossResult r = softmax_cross_entropy(logits, all.labels, classes, 1.0f);
  return {r.loss, static_cast<double>(r.correct) / static_cast<double>(all.labels.size())};
}

}  // namespace fmtcheck::train
