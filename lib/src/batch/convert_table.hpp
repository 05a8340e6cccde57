// The batch path of the IEEE P3109 binary8 members: a table of the core's
// results indexed by the float32 bit pattern's top bits. Internal to lib/src.
//
// Rounding a float32 into a format of at most 8 significant bits in a
// deterministic mode is a step function of the bit pattern (for each sign)
// whose steps begin at a value of the format, at a tie between two
// neighbours, or one pattern past either; such a value has at most 9
// significant bits, so its pattern ends in 15 zero bits. Flags step at the
// same places (inexact at the values, tininess at powers of two and ties,
// invalid where the quiet NaNs begin). So inside each bucket of 2^15
// consecutive patterns the core gives the first pattern one result and
// every other pattern one shared result: two table entries per bucket.
// The table is built from the core, checked where each bucket's second
// result must hold (its second, middle and last patterns), and proven
// against the core on every float32 input by tests/batch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "fmtcheck/core/flags.hpp"
#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/policy.hpp"

namespace fmtcheck::detail {

inline constexpr int kTableLowBits = 15;  // patterns per bucket: 2^15

struct ConvertTable {
  // [2 * bucket]: the bucket's first pattern, [2 * bucket + 1]: the rest;
  // each the code in bits 0-7 and the flag bits above.
  std::vector<std::uint32_t> entries;
};

// Whether the table serves this pair: a P3109 member under a deterministic
// rounding mode (rne, rna, rtz, rup, rdn) and any saturation mode, the
// other policy axes at their defaults.
bool table_serves(const Format& f, const Policy& p);

// The pair's table (built on first use, shared among threads, a few recent
// pairs kept), or null where table_serves is false or a bucket's check
// fails (the core then converts every value).
std::shared_ptr<const ConvertTable> convert_table(const Format& f, const Policy& p);

// Converts n values through the table; adds to *counts.
void convert_with_table(const ConvertTable& table, const float* in, std::size_t n, std::uint8_t* out,
                        FlagCounts* counts);

}  // namespace fmtcheck::detail
