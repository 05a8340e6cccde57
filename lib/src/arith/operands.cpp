// The operand rules every arithmetic operation shares: daz, NaN propagation
// and the default NaN of an invalid operation (IEEE 754 §6.2, §7.2).
#include "arith/exact.hpp"
#include "fmtcheck/core/nan_rules.hpp"

namespace fmtcheck::arith {

std::optional<Conversion> propagate_nan(std::span<const Unpacked* const> operands, const Format& to,
                                        const Policy& p) {
  const Unpacked* first = nullptr;
  const Unpacked* first_signaling = nullptr;
  for (const Unpacked* x : operands) {
    if (!x->is_nan()) continue;
    if (first == nullptr) first = x;
    if (x->signaling && first_signaling == nullptr) first_signaling = x;
  }
  if (first == nullptr) return std::nullopt;
  const bool signaling = first_signaling != nullptr;
  if (signaling && signaling_operand_first(p.nan)) first = first_signaling;
  Conversion c = round_to_format(*first, to, p);
  if (signaling) c.flags |= Flag::invalid;
  return c;
}

Conversion invalid_operation(const Format& to, const Policy& p) {
  // The platform's default NaN, quiet bit only, with its sign (x86's is
  // negative, ARM's positive); the NaN convention then decides the bits.
  Unpacked nan;
  nan.kind = Unpacked::Kind::nan;
  nan.sign = default_nan_negative(p.nan);
  nan.significand = std::uint64_t{1} << 63;
  Conversion c = round_to_format(nan, to, p);
  c.flags |= Flag::invalid;
  if (to.has_nan()) c.flags |= Flag::nan_produced;
  return c;
}

Unpacked signed_zero(bool sign) {
  Unpacked z;
  z.kind = Unpacked::Kind::zero;
  z.sign = sign;
  return z;
}

Unpacked signed_infinity(bool sign) {
  Unpacked z;
  z.kind = Unpacked::Kind::inf;
  z.sign = sign;
  return z;
}

bool zero_sum_sign(bool a_sign, bool b_sign, Rounding r) {
  return a_sign == b_sign ? a_sign : r == Rounding::rdn;
}

Conversion round_with(const Unpacked& exact, const Format& to, const Policy& p, Flags flags) {
  Conversion c = round_to_format(exact, to, p);
  c.flags |= flags;
  return c;
}

}  // namespace fmtcheck::arith
