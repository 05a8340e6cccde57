// Each rule here is written from the definition it names (IEEE 754-2019
// clauses 4.3 rounding, 7.4 overflow, 7.5 underflow; OCP FP8/MX for formats
// without infinity; the policy and flag comments in fmtcheck's headers for
// the ML-specific axes), not from the core's code.
#include "reference_rounding.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace fmtcheck::reference {
namespace {

bool flushes_inputs(const Policy& p) { return p.subnormals == Subnormals::daz || p.subnormals == Subnormals::ftz_daz; }
bool flushes_results(const Policy& p) { return p.subnormals == Subnormals::ftz || p.subnormals == Subnormals::ftz_daz; }

bool has_nan(const ReferenceFormat& f) { return f.definition().specials != Specials::none; }

// The NaN code each convention produces (see the NanConvention comments):
// ieee keeps sign and the payload's top bits and sets the quiet bit; cuda
// (NVIDIA's float conversions) gives the all-ones positive code for a NaN
// input and keeps the sign of a NaN it creates; canonical is +quiet.
// Formats with a single NaN pattern differ at most in its sign; formats
// without NaN stand in zero with the sign (ieee), +max (cuda) or +0.
std::uint64_t nan_code(const ReferenceFormat& f, NanConvention c, bool negative, std::uint64_t mantissa,
                       int mantissa_bits, bool created) {
  const Definition& d = f.definition();
  const int m = d.mantissa_bits;
  const std::uint64_t sign = negative ? f.sign_bit() : 0;
  const std::uint64_t all_ones = (std::uint64_t{1} << (d.exponent_bits + m)) - 1;
  switch (d.specials) {
    case Specials::ieee: {
      const std::uint64_t exponent = all_ones & ~((std::uint64_t{1} << m) - 1);
      const std::uint64_t quiet = std::uint64_t{1} << (m - 1);
      const std::uint64_t payload = mantissa_bits >= m ? mantissa >> (mantissa_bits - m) : mantissa << (m - mantissa_bits);
      if (c == NanConvention::ieee) return sign | exponent | quiet | payload;
      if (c == NanConvention::cuda) return all_ones;
      return exponent | quiet;
    }
    case Specials::fn: return (c == NanConvention::ieee || (c == NanConvention::cuda && created) ? sign : 0) | all_ones;
    case Specials::fnuz: return f.sign_bit();
    case Specials::none:
      if (c == NanConvention::ieee) return sign;
      if (c == NanConvention::cuda) return f.max_finite().code;
      return 0;
  }
  return 0;
}

// A NaN made from a non-NaN input; a format without NaN cannot make one.
Conversion created_nan(const ReferenceFormat& f, const Policy& p, bool negative, Flags flags) {
  flags |= has_nan(f) ? Flags(Flag::nan_produced) : Flags(Flag::invalid);
  return {f.bits(false, nan_code(f, p.nan, negative, 0, 0, true)), flags};
}

Conversion zero(const ReferenceFormat& f, const Policy& p, bool negative, Flags flags) {
  if (!f.has_zero()) return created_nan(f, p, negative, flags | Flag::invalid);  // E8M0 has no zero
  return {f.bits(negative && f.has_negative_zero(), 0), flags};
}

Conversion saturated(const ReferenceFormat& f, bool negative, Flags flags) {
  return {f.bits(negative, f.max_finite().code), flags | Flag::saturated};
}

// IEEE 754 7.4: rounding toward zero (and the directed mode pointing at
// zero) delivers the largest finite value, the others infinity. Round to odd
// is truncation plus a sticky last bit, so it never leaves the finite range.
// Without infinity the result is NaN, without NaN too (MX) the largest value.
Conversion overflow(const ReferenceFormat& f, const Policy& p, bool negative) {
  const Flags flags = Flags(Flag::overflow) | Flag::inexact;
  const Rounding r = p.rounding;
  const bool toward_zero = r == Rounding::rtz || r == Rounding::rto || (r == Rounding::rup && negative) ||
                           (r == Rounding::rdn && !negative);
  const Specials s = f.definition().specials;
  if (p.overflow == Overflow::sat || toward_zero || s == Specials::none) return saturated(f, negative, flags);
  if (s == Specials::ieee) {
    const int m = f.definition().mantissa_bits;
    const std::uint64_t infinity = ((std::uint64_t{1} << f.definition().exponent_bits) - 1) << m;
    return {f.bits(negative, infinity), flags};
  }
  return created_nan(f, p, negative, flags);
}

Conversion infinity(const ReferenceFormat& f, const Policy& p, bool negative) {
  const Definition& d = f.definition();
  if (!d.is_signed && negative) return created_nan(f, p, negative, Flag::invalid);
  if (p.overflow == Overflow::sat) return saturated(f, negative, {});
  if (d.specials == Specials::ieee) {
    return {f.bits(negative, ((std::uint64_t{1} << d.exponent_bits) - 1) << d.mantissa_bits), {}};
  }
  if (d.specials == Specials::none) return saturated(f, negative, Flag::invalid);
  return created_nan(f, p, negative, Flag::invalid);
}

// Whether a magnitude strictly between lo and hi rounds to hi. The parities
// are those of the two codes ("even" is the code's last bit, which for
// formats without mantissa bits is the exponent's).
bool rounds_to_upper(const Real& v, const Real& lo, const Real& hi, int versus_midpoint, bool hi_odd,
                     bool negative, const Policy& p) {
  switch (p.rounding) {
    case Rounding::rne: return versus_midpoint > 0 || (versus_midpoint == 0 && !hi_odd);
    case Rounding::rna: return versus_midpoint >= 0;
    case Rounding::rtz: return false;
    case Rounding::rup: return !negative;
    case Rounding::rdn: return negative;
    case Rounding::rto: return hi_odd;
    case Rounding::sr: {
      // floor(f * 2^n) + r >= 2^n with f = (v - lo) / (hi - lo) holds
      // exactly when f * 2^n >= 2^n - r (the right side is an integer), that
      // is when v >= lo + (hi - lo) * (2^n - r) / 2^n.
      const int n = p.random_bit_count;
      const std::uint64_t r = p.random_bits & ((std::uint64_t{1} << n) - 1);
      const Real threshold = lo + ldexp((hi - lo) * Real((std::uint64_t{1} << n) - r), -n);
      return v >= threshold;
    }
    case Rounding::sr_rne:
    case Rounding::sr_rna:
    case Rounding::sr_rno: throw std::logic_error("the reference models sr only");
  }
  return false;
}

// IEEE 754 7.5: tiny before rounding is 0 < |x| < min normal; tiny after
// rounding is "the result rounded to the format's precision with unbounded
// exponent range is below min normal", which only a value in the top ulp
// below min normal can escape, by rounding up to min normal itself (whose
// code is even; the value below has an all-ones significand, odd).
bool is_tiny(const ReferenceFormat& f, const Real& v, bool negative, const Policy& p) {
  if (v >= f.min_normal()) return false;
  if (p.tininess == Tininess::before) return true;
  const Real& lo = f.below_min_normal();
  if (v <= lo) return true;
  const Real mid = ldexp(lo + f.min_normal(), -1);
  const int versus = v < mid ? -1 : v > mid ? 1 : 0;
  return !rounds_to_upper(v, lo, f.min_normal(), versus, false, negative, p);
}

Conversion finite(const ReferenceFormat& f, const Input& x, const Position& at, const Policy& p) {
  if (!f.definition().is_signed && x.negative) return created_nan(f, p, true, Flag::invalid);
  if (at.beyond) return overflow(f, p, x.negative);
  const bool tiny = is_tiny(f, x.magnitude, x.negative, p);

  if (at.below_ladder) {
    // No zero (E8M0): the smallest value is the only candidate in every mode.
    Flags flags = Flag::inexact;
    if (tiny) flags |= Flag::underflow;
    return {f.bits(x.negative, f.ladder().front().code), flags};
  }

  const auto& ladder = f.ladder();
  std::size_t chosen = at.lower;
  if (!at.exact) {
    const Value& lo = ladder[at.lower];
    const Value& hi = ladder[at.lower + 1];
    if (rounds_to_upper(x.magnitude, lo.magnitude, hi.magnitude, at.versus_midpoint, (hi.code & 1) != 0, x.negative, p)) {
      ++chosen;
    }
  }
  if (chosen == f.overflow_index()) return overflow(f, p, x.negative);

  if (tiny && flushes_results(p) && f.has_zero()) {
    return zero(f, p, x.negative,
                Flags(Flag::underflow) | Flag::inexact | Flag::flushed | Flag::tiny_to_zero);
  }
  const Real& result = ladder[chosen].magnitude;
  Flags flags;
  if (!at.exact) flags |= Flag::inexact;
  if (tiny && !at.exact) flags |= Flag::underflow;
  if (result == 0) return zero(f, p, x.negative, flags | Flag::tiny_to_zero);
  if (result < f.min_normal()) flags |= Flag::subnormal;
  return {f.bits(x.negative, ladder[chosen].code), flags};
}

}  // namespace

// The exact value of an IEEE binary float or double, read by the C library
// (fpclassify, fabs) rather than by fmtcheck's unpack.
template <typename T, typename Bits>
Input from_ieee(T x) {
  constexpr int mantissa_bits = std::numeric_limits<T>::digits - 1;
  const auto bits = std::bit_cast<Bits>(x);
  Input in;
  in.negative = (bits >> (8 * sizeof(T) - 1)) != 0;
  switch (std::fpclassify(x)) {
    case FP_NAN:
      in.kind = Input::Kind::nan;
      in.nan_mantissa = bits & ((Bits{1} << mantissa_bits) - 1);
      in.nan_mantissa_bits = mantissa_bits;
      in.signaling = ((bits >> (mantissa_bits - 1)) & 1u) == 0;
      break;
    case FP_INFINITE: in.kind = Input::Kind::inf; break;
    case FP_ZERO: in.kind = Input::Kind::zero; break;
    default:
      in.kind = Input::Kind::finite;
      in.magnitude = Real(std::fabs(x));
      in.source_subnormal = std::fpclassify(x) == FP_SUBNORMAL;
  }
  return in;
}

Input from_float(float x) { return from_ieee<float, std::uint32_t>(x); }
Input from_double(double x) { return from_ieee<double, std::uint64_t>(x); }

Position locate(const ReferenceFormat& f, const Real& magnitude) {
  const auto& ladder = f.ladder();
  const auto above = std::upper_bound(ladder.begin(), ladder.end(), magnitude,
                                      [](const Real& v, const Value& e) { return v < e.magnitude; });
  Position at;
  if (above == ladder.begin()) {
    at.below_ladder = true;
    return at;
  }
  at.lower = static_cast<std::size_t>(above - ladder.begin()) - 1;
  if (at.lower == f.overflow_index()) {
    at.beyond = true;
    return at;
  }
  at.exact = ladder[at.lower].magnitude == magnitude;
  const Real& mid = f.midpoints()[at.lower];
  at.versus_midpoint = magnitude < mid ? -1 : magnitude > mid ? 1 : 0;
  return at;
}

Conversion convert(const ReferenceFormat& f, const Input& x, const Position& at, const Policy& p) {
  switch (x.kind) {
    case Input::Kind::nan: {
      // Quieting a signaling NaN is invalid (IEEE 754 7.2); so is a NaN the
      // format cannot hold. A NaN input is no new NaN.
      const bool invalid = x.signaling || !has_nan(f);
      return {f.bits(false, nan_code(f, p.nan, x.negative, x.nan_mantissa, x.nan_mantissa_bits, false)),
              invalid ? Flags(Flag::invalid) : Flags()};
    }
    case Input::Kind::inf: return infinity(f, p, x.negative);
    case Input::Kind::zero: return zero(f, p, x.negative, {});
    case Input::Kind::finite:
      if (x.source_subnormal && flushes_inputs(p)) {
        // daz: the input is replaced by zero; the zero then converts as any zero.
        const Conversion c = zero(f, p, x.negative, Flag::flushed);
        return f.has_zero() ? Conversion{c.bits, c.flags | Flag::tiny_to_zero} : c;
      }
      return finite(f, x, at, p);
  }
  return {};
}

}  // namespace fmtcheck::reference
