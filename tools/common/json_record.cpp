#include "common/json_record.hpp"

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

}  // namespace fmtcheck::cli
