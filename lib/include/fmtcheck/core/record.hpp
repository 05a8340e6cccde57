// A report row as named fields, in order: what the CLI writes as a JSON
// object and the Python package returns as a dict, built once in the library
// so that both front ends name and order the fields alike.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace fmtcheck {

// monostate: a field with no value (JSON null, Python None). A float stays
// a float, so that JSON writes it with a float's shortest digits.
using FieldValue = std::variant<std::monostate, bool, std::int64_t, std::uint64_t, float, double, std::string>;
using Record = std::vector<std::pair<std::string, FieldValue>>;

}  // namespace fmtcheck
