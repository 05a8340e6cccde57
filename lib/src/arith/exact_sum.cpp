// Exact products and sums of unpacked values. A sum is formed in a window
// twice as wide as the addends' significands: 256 bits for Terms (128-bit
// significands), 128 bits for Unpacked values (64-bit ones). The larger
// addend's significand sits just below the top bit (which takes the carry),
// the smaller is shifted right by the exponent difference and any bits
// shifted out are "jammed" into bit 0. Jamming is exact for rounding: when
// bits are lost the exponent difference is at least 2, so at most one
// leading bit cancels, and bit 0 stays far below the 64 bits kept; it changes
// the value by less than one unit of bit 0 and keeps the sticky bit right.
#include <bit>

#include "arith/exact.hpp"

namespace fmtcheck::arith {
namespace {

struct U256 {
  u128 hi = 0;
  u128 lo = 0;
};

int countl_zero(u128 x) {
  const auto hi = static_cast<std::uint64_t>(x >> 64);
  return hi != 0 ? std::countl_zero(hi) : 64 + std::countl_zero(static_cast<std::uint64_t>(x));
}

int countl_zero(const U256& x) { return x.hi != 0 ? countl_zero(x.hi) : 128 + countl_zero(x.lo); }

// x >> n, with bit 0 set when nonzero bits were shifted out.
U256 shift_right_jam(const U256& x, std::int64_t n) {
  if (n == 0) return x;
  U256 r;
  bool lost = false;
  if (n >= 256) {
    lost = x.hi != 0 || x.lo != 0;
  } else if (n >= 128) {
    r.lo = n == 128 ? x.hi : x.hi >> (n - 128);
    lost = x.lo != 0 || (n > 128 && (x.hi << (256 - n)) != 0);
  } else {
    r.hi = x.hi >> n;
    r.lo = (x.lo >> n) | (x.hi << (128 - n));
    lost = (x.lo << (128 - n)) != 0;
  }
  if (lost) r.lo |= 1;
  return r;
}

U256 shift_left(const U256& x, int n) {
  if (n == 0) return x;
  if (n >= 128) return {x.lo << (n - 128), 0};
  return {(x.hi << n) | (x.lo >> (128 - n)), x.lo << n};
}

U256 plus(const U256& a, const U256& b) {
  U256 r{a.hi + b.hi, a.lo + b.lo};
  if (r.lo < a.lo) ++r.hi;
  return r;
}

U256 minus(const U256& a, const U256& b) {
  U256 r{a.hi - b.hi, a.lo - b.lo};
  if (a.lo < b.lo) --r.hi;
  return r;
}

bool is_zero(const U256& x) { return x.hi == 0 && x.lo == 0; }
// A 128-bit significand placed at bits 254..127; the top 64 bits of a window,
// and whether any bit below them is set.
U256 place(u128 significand) { return {significand >> 1, significand << 127}; }
std::uint64_t top64(const U256& x) { return static_cast<std::uint64_t>(x.hi >> 64); }
bool below_top64(const U256& x) { return static_cast<std::uint64_t>(x.hi) != 0 || x.lo != 0; }

// The same operations on a 128-bit window.
u128 shift_right_jam(u128 x, std::int64_t n) {
  if (n == 0) return x;
  if (n >= 128) return x != 0 ? 1 : 0;
  return (x >> n) | ((x << (128 - n)) != 0 ? 1 : 0);
}
u128 shift_left(u128 x, int n) { return x << n; }
u128 plus(u128 a, u128 b) { return a + b; }
u128 minus(u128 a, u128 b) { return a - b; }
bool is_zero(u128 x) { return x == 0; }
// A 64-bit significand placed at bits 126..63.
u128 place(std::uint64_t significand) { return static_cast<u128>(significand) << 63; }
std::uint64_t top64(u128 x) { return static_cast<std::uint64_t>(x >> 64); }
bool below_top64(u128 x) { return static_cast<std::uint64_t>(x) != 0; }

template <typename T>
bool magnitude_less(const T& a, const T& b) {
  return a.exponent != b.exponent ? a.exponent < b.exponent : a.significand < b.significand;
}

// x + y for finite nonzero Terms or Unpacked values, in the window W.
template <typename W, typename T>
Unpacked sum_in_window(const T& x, const T& y, Rounding r) {
  const T& big = magnitude_less(x, y) ? y : x;
  const T& small = magnitude_less(x, y) ? x : y;
  const W a = place(big.significand);
  const W b = shift_right_jam(place(small.significand), static_cast<std::int64_t>(big.exponent) - small.exponent);
  const W sum = big.sign == small.sign ? plus(a, b) : minus(a, b);
  if (is_zero(sum)) return signed_zero(zero_sum_sign(x.sign, y.sign, r));

  // The bit below the top is 2^big.exponent; normalise the leading one to the top.
  const int lz = countl_zero(sum);
  const W normal = shift_left(sum, lz);
  Unpacked result;
  result.kind = Unpacked::Kind::finite;
  result.sign = big.sign;
  result.exponent = big.exponent + 1 - lz;
  result.significand = top64(normal);
  result.sticky = below_top64(normal);
  return result;
}

}  // namespace

Term widen(const Unpacked& x) { return {x.sign, x.exponent, static_cast<u128>(x.significand) << 64}; }

Term exact_product(const Unpacked& a, const Unpacked& b) {
  // Each significand is in [2^63, 2^64), so the product is in [2^126, 2^128).
  u128 product = static_cast<u128>(a.significand) * b.significand;
  std::int32_t exponent = a.exponent + b.exponent + 1;
  if ((product >> 127) == 0) {
    product <<= 1;
    --exponent;
  }
  return {a.sign != b.sign, exponent, product};
}

Unpacked narrow(const Term& t) {
  Unpacked x;
  x.kind = Unpacked::Kind::finite;
  x.sign = t.sign;
  x.exponent = t.exponent;
  x.significand = static_cast<std::uint64_t>(t.significand >> 64);
  x.sticky = static_cast<std::uint64_t>(t.significand) != 0;
  return x;
}

Unpacked exact_sum(const Term& x, const Term& y, Rounding r) { return sum_in_window<U256>(x, y, r); }

Unpacked exact_sum(const Unpacked& x, const Unpacked& y, Rounding r) { return sum_in_window<u128>(x, y, r); }

}  // namespace fmtcheck::arith
