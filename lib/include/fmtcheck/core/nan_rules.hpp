// Platform NaN conventions, isolated in one place (as SoftFloat's
// specialisation folder): which bits a conversion produces for a NaN.
#pragma once

#include <cstdint>
#include <optional>

#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/policy.hpp"

namespace fmtcheck {

// The code (no padding) a NaN input becomes. payload is the source NaN's
// mantissa left-aligned at bit 63. For a format without NaN (MX FP6/FP4),
// the code that stands in for it (nan_rules.cpp lists it per convention).
std::uint64_t nan_code(const Format& f, NanConvention c, bool sign, std::uint64_t payload);

// The code of a NaN a conversion creates from a non-NaN input of the given
// sign (an infinity or an overflow into E4M3 without saturation, a negative
// value into E8M0).
std::uint64_t created_nan_code(const Format& f, NanConvention c, bool sign);

// Whether the default NaN an invalid operation creates (inf - inf, 0 * inf)
// is negative: x86's "QNaN floating-point indefinite" is, ARM's and the
// canonical NaN are not.
bool default_nan_negative(NanConvention c);

// Whether, of several NaN operands, the first signaling one is propagated
// before any quiet one (ARM); otherwise the first NaN operand is (x86 SSE).
bool signaling_operand_first(NanConvention c);

// Whether fma(a, b, c) = a * b + c looks at the addend c before a and b for
// its NaN, and a quiet NaN addend with 0 * inf gives the default NaN (ARM:
// FPMulAdd hands FPProcessNaNs3 the addend first); otherwise a, b, c in
// order, and 0 * inf + quiet NaN gives c's NaN (x86 FMA3).
bool addend_nan_first(NanConvention c);

}  // namespace fmtcheck
