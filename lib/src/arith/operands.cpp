// The operand rules every arithmetic operation shares: daz, NaN propagation
// and the default NaN of an invalid operation (IEEE 754 §6.2, §7.2).
#include "arith/exact.hpp"

namespace fmtcheck::arith {

std::optional<Conversion> propagate_nan(std::span<const Unpacked* const> operands, const Format& to,
                                        const Policy& p) {
  const Unpacked* first = nullptr;
  bool signaling = false;
  for (const Unpacked* x : operands) {
    if (!x->is_nan()) continue;
    if (first == nullptr) first = x;
    signaling = signaling || x->signaling;
  }
  if (first == nullptr) return std::nullopt;
  Conversion c = round_to_format(*first, to, p);
  if (signaling) c.flags |= Flag::invalid;
  return c;
}

Conversion invalid_operation(const Format& to, const Policy& p) {
  // x86's default NaN ("QNaN floating-point indefinite") is negative with
  // only the quiet bit set; the NaN convention then decides the bits.
  Unpacked nan;
  nan.kind = Unpacked::Kind::nan;
  nan.sign = true;
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
