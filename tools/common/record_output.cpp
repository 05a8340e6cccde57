#include "common/record_output.hpp"

#include "common/table.hpp"

namespace fmtcheck::cli {

nlohmann::ordered_json to_json(const Record& record) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const auto& [name, value] : record) {
    out[name] = std::visit([](const auto& v) {
      if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::monostate>) {
        return nlohmann::ordered_json();
      } else {
        return nlohmann::ordered_json(v);
      }
    }, value);
  }
  return out;
}

std::vector<std::string> field_names(const Record& record) {
  std::vector<std::string> names;
  for (const auto& field : record) names.push_back(field.first);
  return names;
}

std::vector<std::string> to_cells(const Record& record) {
  std::vector<std::string> cells;
  for (const auto& field : record) {
    cells.push_back(std::visit([](const auto& v) -> std::string {
      using T = std::decay_t<decltype(v)>;
      if constexpr (std::is_same_v<T, std::monostate>) {
        return "";
      } else if constexpr (std::is_same_v<T, std::string>) {
        return v;
      } else if constexpr (std::is_same_v<T, bool>) {
        return v ? "1" : "0";
      } else if constexpr (std::is_floating_point_v<T>) {
        return shortest(static_cast<double>(v));
      } else {
        return std::to_string(v);
      }
    }, field.second));
  }
  return cells;
}

}  // namespace fmtcheck::cli
