// Square root (IEEE 754 §5.4.1, §7.2): sqrt(-0) = -0, sqrt(+inf) = +inf, the
// root of any other negative number is invalid.
#include "arith/exact.hpp"

namespace fmtcheck {
namespace {

using arith::u128;

// floor(sqrt(n)) by the binary digit-by-digit method; sets *exact when the
// root has no remainder.
std::uint64_t integer_sqrt(u128 n, bool* exact) {
  u128 root = 0;
  u128 bit = u128{1} << 126;
  while (bit > n) bit >>= 2;
  while (bit != 0) {
    if (n >= root + bit) {
      n -= root + bit;
      root = (root >> 1) + bit;
    } else {
      root >>= 1;
    }
    bit >>= 2;
  }
  *exact = n == 0;
  return static_cast<std::uint64_t>(root);
}

// |x| = s * 2^(e - 63). Scaling s by 2^64 (e odd) or 2^63 (e even) makes the
// power of two even and puts s in [2^126, 2^128), whose root is a 64-bit
// significand with its top bit set.
Unpacked exact_root(const Unpacked& x) {
  const bool odd = (x.exponent & 1) != 0;
  bool exact = false;
  Unpacked r;
  r.kind = Unpacked::Kind::finite;
  r.significand = integer_sqrt(static_cast<u128>(x.significand) << (odd ? 64 : 63), &exact);
  r.exponent = (odd ? x.exponent - 1 : x.exponent) / 2;
  r.sticky = !exact;
  return r;
}

}  // namespace

Conversion sqrt(const Unpacked& a_in, const Format& to, const Policy& p) {
  using namespace arith;
  Flags flags;
  const Unpacked a = screen(a_in, p, flags);
  if (auto nan = propagate_nan({&a}, to, p)) return with_flags(*nan, flags);
  if (a.is_zero()) return round_with(a, to, p, flags);
  if (a.sign) return with_flags(invalid_operation(to, p), flags);
  if (a.is_inf()) return round_with(a, to, p, flags);
  return round_with(exact_root(a), to, p, flags);
}

Conversion sqrt(const Format& f, std::uint64_t a, const Policy& p) { return sqrt(unpack(f, a), f, p); }

}  // namespace fmtcheck
