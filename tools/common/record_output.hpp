// Library records (fmtcheck/core/record.hpp) as JSON objects and CSV rows.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fmtcheck/core/record.hpp"

namespace fmtcheck::cli {

nlohmann::ordered_json to_json(const Record& record);
// The fields' names, and their values as CSV cells: counts in full, numbers
// as their shortest round-trip decimal (a float's value as a double's),
// true/false as 1/0, no value as an empty cell.
std::vector<std::string> field_names(const Record& record);
std::vector<std::string> to_cells(const Record& record);

}  // namespace fmtcheck::cli
