// Fused multiply-add (IEEE 754 §5.4.1): a * b + c with one rounding. The
// product is exact in 128 bits and the sum is formed exactly in exact_sum.
// fma(0, inf, c) is invalid even when c is a quiet NaN (IEEE leaves that case
// to the implementation; x86 FMA3 and ARM signal it); x86 returns c's NaN,
// ARM its default NaN. Of several NaN operands ARM takes the addend first
// (nan_rules.hpp: addend_nan_first).
#include "arith/exact.hpp"
#include "fmtcheck/core/nan_rules.hpp"

namespace fmtcheck {

Conversion fma(const Unpacked& a_in, const Unpacked& b_in, const Unpacked& c_in, const Format& to, const Policy& p) {
  using namespace arith;
  Flags flags;
  const Unpacked a = screen(a_in, p, flags);
  const Unpacked b = screen(b_in, p, flags);
  const Unpacked c = screen(c_in, p, flags);
  const bool zero_times_inf = (a.is_inf() && b.is_zero()) || (a.is_zero() && b.is_inf());
  if (zero_times_inf) flags |= Flag::invalid;
  const bool addend_first = addend_nan_first(p.nan);
  if (addend_first && zero_times_inf && c.is_nan() && !c.signaling) return with_flags(invalid_operation(to, p), flags);
  if (auto nan = addend_first ? propagate_nan({&c, &a, &b}, to, p) : propagate_nan({&a, &b, &c}, to, p)) {
    return with_flags(*nan, flags);
  }
  if (zero_times_inf) return with_flags(invalid_operation(to, p), flags);

  const bool product_sign = a.sign != b.sign;
  if (a.is_inf() || b.is_inf()) {
    if (c.is_inf() && c.sign != product_sign) return with_flags(invalid_operation(to, p), flags);
    return round_with(signed_infinity(product_sign), to, p, flags);
  }
  if (c.is_inf()) return round_with(c, to, p, flags);
  if (a.is_zero() || b.is_zero()) {
    if (c.is_zero()) return round_with(signed_zero(zero_sum_sign(product_sign, c.sign, p.rounding)), to, p, flags);
    return round_with(c, to, p, flags);
  }
  const Term product = exact_product(a, b);
  if (c.is_zero()) return round_with(narrow(product), to, p, flags);
  return round_with(exact_sum(product, widen(c), p.rounding), to, p, flags);
}

Conversion fma(const Format& f, std::uint64_t a, std::uint64_t b, std::uint64_t c, const Policy& p) {
  return fma(unpack(f, a), unpack(f, b), unpack(f, c), f, p);
}

}  // namespace fmtcheck
