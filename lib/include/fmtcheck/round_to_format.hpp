// The one rounding core: exact unpacked value -> bits of the target format.
#pragma once

#include <cstdint>

#include "fmtcheck/flags.hpp"
#include "fmtcheck/format.hpp"
#include "fmtcheck/policy.hpp"
#include "fmtcheck/unpacked.hpp"

namespace fmtcheck {

struct Conversion {
  std::uint64_t bits = 0;  // container bits of the target format
  Flags flags;
  friend bool operator==(const Conversion&, const Conversion&) = default;
};

// Rounds x to f under policy p. Every conversion and every arithmetic result
// in fmtcheck goes through here.
Conversion round_to_format(const Unpacked& x, const Format& f, const Policy& p);

}  // namespace fmtcheck
