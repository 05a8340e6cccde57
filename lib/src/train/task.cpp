#include "fmtcheck/train/task.hpp"

#include <stdexcept>

namespace fmtcheck::train {

Task::Task(const std::string& model, const std::string& path) : model_(model) {
  if (model == "mlp") {
    digits_ = split_digits(read_digits(path));
  } else if (model == "transformer") {
    sort_ = split_sort_task(read_sort_task(path));
  } else {
    throw std::invalid_argument("unknown model '" + model + "': expected mlp or transformer");
  }
}

std::unique_ptr<Model> Task::make_model(std::uint64_t seed) const {
  if (model_ == "mlp") return std::make_unique<DigitsMlp>(digits_.train, digits_.held_out, seed);
  return std::make_unique<SortTransformer>(sort_.train, sort_.held_out, seed);
}

}  // namespace fmtcheck::train
