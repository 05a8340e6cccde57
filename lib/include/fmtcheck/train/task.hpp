// The bundled training tasks by the name of their model: the digits for the
// MLP, the sort task for the transformer, each split into training and
// held-out examples. One place makes a model from a name and a data file, for
// `fmtcheck train` and for the Python tests that hold torch to it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "fmtcheck/train/digits.hpp"
#include "fmtcheck/train/transformer.hpp"

namespace fmtcheck::train {

class Task {
 public:
  // model: "mlp" or "transformer"; path: its data file. Throws
  // std::invalid_argument for another name or bad data.
  Task(const std::string& model, const std::string& path);
  // A model at its initial weights for `seed`, reading this task's data
  // (which must outlive it).
  [[nodiscard]] std::unique_ptr<Model> make_model(std::uint64_t seed) const;

 private:
  std::string model_;
  DigitsSplit digits_;
  SortSplit sort_;
};

}  // namespace fmtcheck::train
