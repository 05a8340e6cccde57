// Platform NaN conventions, isolated in one place (as SoftFloat's
// specialisation folder): which bits a conversion produces for a NaN.
#pragma once

#include <cstdint>
#include <optional>

#include "fmtcheck/format.hpp"
#include "fmtcheck/policy.hpp"

namespace fmtcheck {

// The code (no padding) of the NaN a conversion produces. payload is the
// source NaN's mantissa left-aligned at bit 63 (0 when the NaN is created,
// e.g. from an infinity). For a format without NaN returns the code that
// stands in for it (see nan_rules.cpp).
std::uint64_t nan_code(const Format& f, NanConvention c, bool sign, std::uint64_t payload);

}  // namespace fmtcheck
