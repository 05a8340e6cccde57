// Division (IEEE 754 §6.1, §7.2, §7.3): 0/0 and inf/inf are invalid, finite
// nonzero / 0 raises divide_by_zero.
#include "arith/exact.hpp"

namespace fmtcheck {
namespace {

// |a| / |b| for finite nonzero operands. (sa * 2^64) / sb lies in
// (2^63, 2^65): its integer part has at least 64 significant bits, and the
// remainder is the sticky bit.
Unpacked exact_quotient(const Unpacked& a, const Unpacked& b) {
  using arith::u128;
  const u128 dividend = static_cast<u128>(a.significand) << 64;
  const u128 quotient = dividend / b.significand;
  const bool remainder = dividend % b.significand != 0;
  Unpacked q;
  q.kind = Unpacked::Kind::finite;
  q.sign = a.sign != b.sign;
  if ((quotient >> 64) != 0) {
    q.exponent = a.exponent - b.exponent;
    q.significand = static_cast<std::uint64_t>(quotient >> 1);
    q.sticky = remainder || (quotient & 1) != 0;
  } else {
    q.exponent = a.exponent - b.exponent - 1;
    q.significand = static_cast<std::uint64_t>(quotient);
    q.sticky = remainder;
  }
  return q;
}

}  // namespace

Conversion div(const Unpacked& a_in, const Unpacked& b_in, const Format& to, const Policy& p) {
  using namespace arith;
  Flags flags;
  const Unpacked a = screen(a_in, p, flags);
  const Unpacked b = screen(b_in, p, flags);
  if (auto nan = propagate_nan({&a, &b}, to, p)) return with_flags(*nan, flags);
  const bool sign = a.sign != b.sign;
  if ((a.is_inf() && b.is_inf()) || (a.is_zero() && b.is_zero())) return with_flags(invalid_operation(to, p), flags);
  if (a.is_inf()) return round_with(signed_infinity(sign), to, p, flags);
  if (b.is_inf() || a.is_zero()) return round_with(signed_zero(sign), to, p, flags);
  if (b.is_zero()) return round_with(signed_infinity(sign), to, p, flags | Flag::divide_by_zero);
  return round_with(exact_quotient(a, b), to, p, flags);
}

Conversion div(const Format& f, std::uint64_t a, std::uint64_t b, const Policy& p) {
  return div(unpack(f, a), unpack(f, b), f, p);
}

}  // namespace fmtcheck
