// Library records (fmtcheck/core/record.hpp) as JSON objects.
#pragma once

#include <nlohmann/json.hpp>

#include "fmtcheck/core/record.hpp"

namespace fmtcheck::cli {

nlohmann::ordered_json to_json(const Record& record);

}  // namespace fmtcheck::cli
