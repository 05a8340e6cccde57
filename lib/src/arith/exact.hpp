// Internal to the arithmetic files: exact intermediates and the operand
// rules every operation shares (daz, NaN propagation, invalid operations).
#pragma once

#include <initializer_list>
#include <optional>
#include <span>

#include "fmtcheck/arith/arithmetic.hpp"

namespace fmtcheck::arith {

// GCC and Clang's 128-bit integer (__extension__ keeps -Wpedantic quiet).
__extension__ typedef unsigned __int128 u128;

// An exact finite nonzero value with a 128-bit significand:
// |value| = significand * 2^(exponent - 127), bit 127 set. Wide enough for the
// exact product of two Unpacked significands.
struct Term {
  bool sign = false;
  std::int32_t exponent = 0;
  u128 significand = 0;
};

Term widen(const Unpacked& x);
Term exact_product(const Unpacked& a, const Unpacked& b);
// The top 64 bits of a term plus sticky: what round_to_format needs.
Unpacked narrow(const Term& t);
// x + y, exact up to the sticky bit. An exact zero gets IEEE's sign rule for
// addends of opposite signs: +0, or -0 when rounding toward -infinity.
Unpacked exact_sum(const Term& x, const Term& y, Rounding r);
// The same for finite nonzero unpacked values, in half the width (faster).
Unpacked exact_sum(const Unpacked& x, const Unpacked& y, Rounding r);

// daz: a subnormal operand becomes a zero of its sign (and raises flushed).
// The result never claims to be a source subnormal, so the rounding core does
// not flush the operation's result as if it were an input.
// Inline: every operation calls it on every operand.
inline Unpacked screen(const Unpacked& x, const Policy& p, Flags& flags) {
  Unpacked y = x;
  y.source_subnormal = false;
  if (x.source_subnormal && x.is_finite_nonzero() && p.flush_inputs()) {
    flags |= Flag::flushed;
    y.kind = Unpacked::Kind::zero;
    y.exponent = 0;
    y.significand = 0;
    y.sticky = false;
  }
  return y;
}

// When an operand is NaN: the first NaN operand through the NaN convention,
// invalid if any operand is signaling.
std::optional<Conversion> propagate_nan(std::span<const Unpacked* const> operands, const Format& to,
                                        const Policy& p);
inline std::optional<Conversion> propagate_nan(std::initializer_list<const Unpacked*> operands, const Format& to,
                                               const Policy& p) {
  for (const Unpacked* x : operands) {
    if (x->is_nan()) return propagate_nan(std::span(operands.begin(), operands.size()), to, p);
  }
  return std::nullopt;  // the common case, decided inline
}
// The default NaN of an invalid operation.
Conversion invalid_operation(const Format& to, const Policy& p);

Unpacked signed_zero(bool sign);
Unpacked signed_infinity(bool sign);
// IEEE's sign of an exact zero sum of two zeros or of opposite addends.
bool zero_sum_sign(bool a_sign, bool b_sign, Rounding r);

// round_to_format plus the flags gathered before rounding.
Conversion round_with(const Unpacked& exact, const Format& to, const Policy& p, Flags flags);
inline Conversion with_flags(Conversion c, Flags flags) {
  c.flags |= flags;
  return c;
}

}  // namespace fmtcheck::arith
