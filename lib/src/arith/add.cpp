// Addition and subtraction (IEEE 754 §6.1, §6.3): inf - inf is invalid, an
// exact zero sum follows the sign rule in zero_sum_sign.
#include "arith/exact.hpp"

namespace fmtcheck {

Conversion add(const Unpacked& a_in, const Unpacked& b_in, const Format& to, const Policy& p) {
  using namespace arith;
  Flags flags;
  const Unpacked a = screen(a_in, p, flags);
  const Unpacked b = screen(b_in, p, flags);
  if (auto nan = propagate_nan({&a, &b}, to, p)) return with_flags(*nan, flags);
  if (a.is_inf() || b.is_inf()) {
    if (a.is_inf() && b.is_inf() && a.sign != b.sign) return with_flags(invalid_operation(to, p), flags);
    return round_with(a.is_inf() ? a : b, to, p, flags);
  }
  if (a.is_zero() && b.is_zero()) return round_with(signed_zero(zero_sum_sign(a.sign, b.sign, p.rounding)), to, p, flags);
  if (a.is_zero()) return round_with(b, to, p, flags);
  if (b.is_zero()) return round_with(a, to, p, flags);
  return round_with(exact_sum(a, b, p.rounding), to, p, flags);
}

Conversion sub(const Unpacked& a, const Unpacked& b, const Format& to, const Policy& p) {
  // a - b is a + (-b); a NaN keeps its sign, as x86 subss does.
  Unpacked negated = b;
  if (!b.is_nan()) negated.sign = !b.sign;
  return add(a, negated, to, p);
}

Conversion add(const Format& f, std::uint64_t a, std::uint64_t b, const Policy& p) {
  return add(unpack(f, a), unpack(f, b), f, p);
}
Conversion sub(const Format& f, std::uint64_t a, std::uint64_t b, const Policy& p) {
  return sub(unpack(f, a), unpack(f, b), f, p);
}

}  // namespace fmtcheck
