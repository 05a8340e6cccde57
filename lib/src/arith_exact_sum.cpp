// Exact products and sums of unpacked values. A sum is formed in a 256-bit
// window: the larger addend's 128-bit significand sits at bits 254..127 (bit
// 255 takes the carry), the smaller is shifted right by the exponent
// difference and any bits shifted out are "jammed" into bit 0. Jamming is
// exact for rounding: when bits are lost the exponent difference is at least
// 2, so at most one leading bit cancels, and bit 0 stays far below the 64
// bits kept; it changes the value by less than one unit of bit 0 and keeps
// the sticky bit right.
#include <bit>

#include "arith_exact.hpp"

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

bool magnitude_less(const Term& a, const Term& b) {
  return a.exponent != b.exponent ? a.exponent < b.exponent : a.significand < b.significand;
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

Unpacked exact_sum(const Term& x, const Term& y, Rounding r) {
  const Term& big = magnitude_less(x, y) ? y : x;
  const Term& small = magnitude_less(x, y) ? x : y;
  const U256 a{big.significand >> 1, big.significand << 127};
  const U256 b = shift_right_jam({small.significand >> 1, small.significand << 127},
                                 static_cast<std::int64_t>(big.exponent) - small.exponent);
  const U256 sum = big.sign == small.sign ? plus(a, b) : minus(a, b);
  if (sum.hi == 0 && sum.lo == 0) return signed_zero(zero_sum_sign(x.sign, y.sign, r));

  // Bit 254 of the window is 2^big.exponent; normalise the leading one to bit 255.
  const int lz = countl_zero(sum);
  const U256 normal = shift_left(sum, lz);
  Unpacked result;
  result.kind = Unpacked::Kind::finite;
  result.sign = big.sign;
  result.exponent = big.exponent + 1 - lz;
  result.significand = static_cast<std::uint64_t>(normal.hi >> 64);
  result.sticky = static_cast<std::uint64_t>(normal.hi) != 0 || normal.lo != 0;
  return result;
}

}  // namespace fmtcheck::arith
