// Correctly rounded arithmetic in any format. Every operation computes its
// exact result (as an Unpacked: 64 significant bits plus sticky, enough for
// any format of at most 53 bits' precision) and rounds it once through
// round_to_format, so operations honour the whole Policy exactly as
// conversions do and return their flags.
//
// IEEE 754 rules for special operands:
//   - A NaN operand gives a NaN: the first NaN operand (a, then b, then c)
//     goes through the policy's NaN convention like a converted NaN; any
//     signaling NaN operand raises invalid.
//   - An invalid operation (inf - inf, 0 * inf, 0/0, inf/inf, sqrt of a
//     negative number, fma(0, inf, c)) creates the default NaN: negative and
//     quiet under NanConvention::ieee, as x86 does; flags invalid and
//     nan_produced. Formats without NaN get nan_code()'s stand-in (nan_rules.hpp).
//   - finite / 0 raises divide_by_zero and gives a signed infinity, which then
//     goes through the rounding core like any infinity (+-max and saturated
//     under Overflow::sat; NaN in a format without infinity).
//   - An exact zero sum is +0, or -0 when both addends are -0 or the rounding
//     is toward -infinity (rdn).
//   - daz: a subnormal operand is taken as a zero of its sign (flag flushed).
//   - Stochastic rounding is exact when precision + random_bit_count <= 64,
//     e.g. up to 32 random bits for formats of up to 32 bits' precision.
#pragma once

#include <compare>
#include <cstdint>

#include "fmtcheck/core/flags.hpp"
#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/policy.hpp"
#include "fmtcheck/core/round_to_format.hpp"
#include "fmtcheck/core/unpacked.hpp"

namespace fmtcheck {

// Operands are exact values (from unpack(), any formats, mixed freely); the
// result is rounded once into `to`.
Conversion add(const Unpacked& a, const Unpacked& b, const Format& to, const Policy& p = {});
Conversion sub(const Unpacked& a, const Unpacked& b, const Format& to, const Policy& p = {});
Conversion mul(const Unpacked& a, const Unpacked& b, const Format& to, const Policy& p = {});
Conversion div(const Unpacked& a, const Unpacked& b, const Format& to, const Policy& p = {});
// a * b + c with a single rounding.
Conversion fma(const Unpacked& a, const Unpacked& b, const Unpacked& c, const Format& to, const Policy& p = {});
Conversion sqrt(const Unpacked& a, const Format& to, const Policy& p = {});

// The same operations on container bits, operands and result in format f.
Conversion add(const Format& f, std::uint64_t a, std::uint64_t b, const Policy& p = {});
Conversion sub(const Format& f, std::uint64_t a, std::uint64_t b, const Policy& p = {});
Conversion mul(const Format& f, std::uint64_t a, std::uint64_t b, const Policy& p = {});
Conversion div(const Format& f, std::uint64_t a, std::uint64_t b, const Policy& p = {});
Conversion fma(const Format& f, std::uint64_t a, std::uint64_t b, std::uint64_t c, const Policy& p = {});
Conversion sqrt(const Format& f, std::uint64_t a, const Policy& p = {});
// Conversion between two formats is convert_bits (convert.hpp): the same core.

// IEEE 754 comparison: -0 == +0, NaN is unordered with everything. A quiet
// comparison (==, !=) raises invalid only for a signaling NaN; a signaling one
// (<, <=, >, >=) for any NaN. Honours daz (subnormals compare as zero).
enum class CompareKind : std::uint8_t { quiet, signaling };
struct Comparison {
  std::partial_ordering order = std::partial_ordering::unordered;
  Flags flags;
};
Comparison compare(const Format& f, std::uint64_t a, std::uint64_t b, const Policy& p = {},
                   CompareKind kind = CompareKind::quiet);

// IEEE 754-2019 minimum / maximum: a NaN operand gives NaN, -0 < +0; the
// result is the chosen operand's bits (a when they are equal), or a zero when
// daz flushed it.
Conversion minimum(const Format& f, std::uint64_t a, std::uint64_t b, const Policy& p = {});
Conversion maximum(const Format& f, std::uint64_t a, std::uint64_t b, const Policy& p = {});

}  // namespace fmtcheck
