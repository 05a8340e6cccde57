// Arithmetic over whole arrays of codes, element by element, on several
// threads: each result is arithmetic.hpp's correctly rounded operation, and
// the flags are counted over the array.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "fmtcheck/core/flags.hpp"
#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/policy.hpp"

namespace fmtcheck {

enum class Operation : std::uint8_t { add, sub, mul, div, fma, sqrt, minimum, maximum };
// How many operands the operation takes (1, 2 or 3).
int operand_count(Operation op);

// out[i] = op(a[i], b[i], c[i]) on container bits of f, rounded under p;
// operands the operation does not take may be empty. threads 0: every core.
// Throws std::invalid_argument when the operand and output sizes differ.
FlagCounts elementwise(Operation op, const Format& f, std::span<const std::uint64_t> a, std::span<const std::uint64_t> b,
                       std::span<const std::uint64_t> c, const Policy& p, std::span<std::uint64_t> out,
                       unsigned threads = 0);

}  // namespace fmtcheck
