// Multiplication (IEEE 754 §6.1, §7.2): 0 * inf is invalid; the sign of any
// other result is the exclusive or of the operands' signs.
#include "arith/exact.hpp"

namespace fmtcheck {

Conversion mul(const Unpacked& a_in, const Unpacked& b_in, const Format& to, const Policy& p) {
  using namespace arith;
  Flags flags;
  const Unpacked a = screen(a_in, p, flags);
  const Unpacked b = screen(b_in, p, flags);
  if (auto nan = propagate_nan({&a, &b}, to, p)) return with_flags(*nan, flags);
  const bool sign = a.sign != b.sign;
  if (a.is_inf() || b.is_inf()) {
    if (a.is_zero() || b.is_zero()) return with_flags(invalid_operation(to, p), flags);
    return round_with(signed_infinity(sign), to, p, flags);
  }
  if (a.is_zero() || b.is_zero()) return round_with(signed_zero(sign), to, p, flags);
  return round_with(narrow(exact_product(a, b)), to, p, flags);
}

Conversion mul(const Format& f, std::uint64_t a, std::uint64_t b, const Policy& p) {
  return mul(unpack(f, a), unpack(f, b), f, p);
}

}  // namespace fmtcheck
