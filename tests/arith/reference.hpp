// The exact reference for arithmetic tests, written independently of the
// library: values are Boost.Multiprecision integers on a fixed grid (every
// value of a format is an integer multiple of 2^-q), results are exact
// rationals truncated onto a finer grid 2^-T plus an "exact" bit, and
// rounding picks between neighbours in a table of all the format's values,
// decoded here from the field layout. Nothing in it calls the library's
// rounding, unpacking or arithmetic; it uses only the Format description and
// the Flags/Policy vocabulary.
//
// The conventions it states (the library documents the same ones):
//   - rounding "even"/"odd" is the parity of the code;
//   - overflow: the value rounded with unbounded exponent (the next grid point
//     above max is max + its ulp) exceeds max -> overflow|inexact, and the
//     result is +-max (saturated) under sat, for toward-zero directions and
//     for formats without inf/NaN; else inf, or NaN (nan_produced);
//   - tininess before: 0 < |x| < 2^emin; after: |x| rounded to precision p
//     with unbounded exponent is below 2^emin; underflow = tiny and inexact;
//   - ftz flushes every tiny result (flags underflow|inexact|flushed|
//     tiny_to_zero); a nonzero result that rounds to zero raises tiny_to_zero,
//     a nonzero subnormal result raises subnormal;
//   - formats without zero (E8M0): below the smallest value the result is the
//     smallest value, inexact, and underflow when tiny (2^emin is then the
//     smallest value); a zero or negative result is NaN (invalid|nan_produced);
//     a daz-flushed input raises tiny_to_zero only where a zero results;
//   - NaN bits under NanConvention::ieee: quiet, sign and payload kept; the
//     default NaN of an invalid operation is negative; formats without NaN
//     give -0 for it (invalid only).
#pragma once

#include <algorithm>
#include <boost/multiprecision/cpp_int.hpp>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <vector>

#include "fmtcheck/core/flags.hpp"
#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/policy.hpp"

namespace fmtcheck::reference {

namespace mp = boost::multiprecision;
// Fixed width, so no heap traffic: wide enough for bf16 fma and E8M0 on a
// grid 34 bits finer than the format's.
using Int = mp::number<mp::cpp_int_backend<1024, 1024, mp::signed_magnitude, mp::unchecked, void>>;

enum class Class : std::uint8_t { zero, finite, inf, nan };

struct Value {
  Class cls = Class::zero;
  bool sign = false;
  Int magnitude;  // |value| * 2^q
  bool subnormal = false;
  bool signaling = false;
};

struct Expected {
  std::uint64_t bits = 0;
  Flags flags;
  friend bool operator==(const Expected&, const Expected&) = default;
};

// An exact result: |x| lies in [scaled, scaled + 1) * 2^-T, equal to the
// lower end when exact.
struct Exact {
  bool sign = false;
  Int scaled;
  bool exact = true;
};

inline Int pow2(int n) { return Int(1) << n; }

class Table {
 public:
  explicit Table(const Format& f) : f_(f) {
    const int m = f.mantissa_bits;
    q_ = f.has_subnormals ? f.bias + m - 1 : f.bias + m;
    t_ = q_ + 2 + kRandomBits;
    const std::uint64_t codes = std::uint64_t{1} << f.width();
    values_.reserve(codes);
    for (std::uint64_t c = 0; c < codes; ++c) values_.push_back(decode(c));
    for (std::uint64_t c = 0; c < codes; ++c) {
      if (!sign_of(c) && values_[c].cls != Class::nan && values_[c].cls != Class::inf) {
        ascending_.push_back({values_[c].magnitude << (t_ - q_), c});
      }
    }
    std::sort(ascending_.begin(), ascending_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    const std::uint64_t max_code = ascending_.back().second;
    // Next grid point above max with unbounded exponent: max plus the ulp of
    // max's binade, with max's code + 1 for parity.
    const int max_field = static_cast<int>(max_code >> m);
    const int max_ulp_exponent = max_field - f.bias - m;  // 2^this
    above_max_ = {ascending_.back().first + pow2(max_ulp_exponent + t_), max_code + 1};
    emin_ = f.has_subnormals ? 1 - f.bias : -f.bias;
  }

  static constexpr int kRandomBits = 32;
  const Format& format() const { return f_; }
  int q() const { return q_; }
  int t() const { return t_; }
  const Value& value(std::uint64_t code) const { return values_[code]; }
  std::uint64_t codes() const { return values_.size(); }
  bool sign_of(std::uint64_t code) const { return f_.is_signed && ((code >> (f_.exponent_bits + f_.mantissa_bits)) & 1); }
  std::uint64_t sign_bit() const { return f_.is_signed ? std::uint64_t{1} << (f_.exponent_bits + f_.mantissa_bits) : 0; }
  // Largest finite magnitude, at scale 2^-q.
  Int max_finite() const { return ascending_.back().first >> (t_ - q_); }
  Int min_positive() const { return (ascending_[0].first == 0 ? ascending_[1].first : ascending_[0].first) >> (t_ - q_); }
  int emin() const { return emin_; }

  // Exact dyadic n * 2^-s as an Exact on this table's grid.
  Exact on_grid(const Int& n, int s) const {
    Exact x;
    x.sign = n < 0;
    const Int mag = x.sign ? Int(-n) : n;
    if (s >= t_) {
      x.scaled = mag >> (s - t_);
      x.exact = (x.scaled << (s - t_)) == mag;
    } else {
      x.scaled = mag << (t_ - s);
    }
    return x;
  }

  Expected nan(bool sign, std::uint64_t payload_mantissa) const {
    const int m = f_.mantissa_bits;
    const std::uint64_t s = sign ? sign_bit() : 0;
    switch (f_.specials) {
      case Specials::ieee:
        return {s | (f_.magnitude_mask() & ~((std::uint64_t{1} << m) - 1)) | (std::uint64_t{1} << (m - 1)) |
                    payload_mantissa,
                {}};
      case Specials::fn: return {s | f_.magnitude_mask(), {}};
      case Specials::fnuz: return {sign_bit(), {}};
      case Specials::none: return {s, Flag::invalid};
    }
    return {};
  }
  // The default NaN of an invalid operation.
  Expected invalid() const {
    Expected e = nan(true, 0);
    e.flags |= Flag::invalid;
    if (f_.has_nan()) e.flags |= Flag::nan_produced;
    return e;
  }
  Expected created_nan(bool sign, Flags flags) const {
    Expected e = nan(sign, 0);
    e.flags |= flags | (f_.has_nan() ? Flags(Flag::nan_produced) : Flags(Flag::invalid));
    return e;
  }
  Expected max_value(bool sign, Flags flags) const { return {(sign ? sign_bit() : 0) | ascending_.back().second, flags}; }

  Expected zero(bool sign, Flags flags = {}) const {
    if (!f_.has_subnormals) return created_nan(sign, flags | Flag::invalid);
    return {(sign && f_.has_negative_zero()) ? sign_bit() : 0, flags};
  }

  Expected infinity(bool sign) const {
    if (!f_.is_signed && sign) return created_nan(sign, Flag::invalid);
    // SatPropagate (satprop) keeps infinities, as nosat does.
    if (policy_.overflow == Overflow::sat) return max_value(sign, Flag::saturated);
    if (f_.extended) return {(sign ? sign_bit() : 0) | extended_infinity(), {}};
    switch (f_.specials) {
      case Specials::ieee: return {(sign ? sign_bit() : 0) | f_.infinity_code(), {}};
      case Specials::none: return max_value(sign, Flags(Flag::saturated) | Flag::invalid);
      default: return created_nan(sign, Flag::invalid);
    }
  }

  void set_policy(const Policy& p) { policy_ = p; }
  const Policy& policy() const { return policy_; }

  // Rounds an exact finite value (or zero) under the current policy.
  Expected round(const Exact& x) const {
    const Policy& p = policy_;
    if (x.exact && x.scaled == 0) return zero(x.sign);
    if (!f_.is_signed && x.sign) return created_nan(x.sign, Flag::invalid);
    const Int& top = above_max_.first;
    if (!below(x, top)) return overflow(x.sign);
    // Largest table entry <= x.
    auto it = std::upper_bound(ascending_.begin(), ascending_.end(), x.scaled,
                               [](const Int& v, const auto& e) { return v < e.first; });
    if (it == ascending_.begin()) {  // below the smallest value: no zero, and nothing to flush to
      return {ascending_[0].second, is_tiny(x) ? Flags(Flag::inexact) | Flag::underflow : Flags(Flag::inexact)};
    }
    const auto lo = *(it - 1);
    const auto hi = it == ascending_.end() ? above_max_ : *it;
    const bool exact = x.exact && x.scaled == lo.first;
    const bool up = !exact && choose_up(x, lo.first, hi.first, (lo.second & 1) == 0);
    if (up && hi.second == above_max_.second) return overflow(x.sign);
    const auto& result = up ? hi : lo;

    Flags flags;
    if (!exact) flags |= Flag::inexact;
    const bool tiny = is_tiny(x);
    if (tiny && !exact) flags |= Flag::underflow;
    if (tiny && p.flush_results()) {
      return zero(x.sign, flags | Flag::underflow | Flag::inexact | Flag::flushed | Flag::tiny_to_zero);
    }
    if (result.first == 0) return zero(x.sign, flags | Flag::tiny_to_zero);
    if (f_.has_subnormals && result.first < pow2(emin_ + t_)) flags |= Flag::subnormal;
    return {(x.sign ? sign_bit() : 0) | result.second, flags};
  }

 private:
  Value decode(std::uint64_t code) const {
    const int e = f_.exponent_bits;
    const int m = f_.mantissa_bits;
    Value v;
    v.sign = sign_of(code);
    const std::uint64_t field = (code >> m) & ((std::uint64_t{1} << e) - 1);
    const std::uint64_t mant = code & ((std::uint64_t{1} << m) - 1);
    const std::uint64_t magnitude = code & ~sign_bit();
    const bool all_ones = field == (std::uint64_t{1} << e) - 1;
    if (f_.specials == Specials::ieee && all_ones) {
      v.cls = mant == 0 ? Class::inf : Class::nan;
      v.signaling = mant != 0 && (mant >> (m - 1)) == 0;
      return v;
    }
    if (f_.specials == Specials::fn && magnitude == (std::uint64_t{1} << (e + m)) - 1) {
      v.cls = Class::nan;
      return v;
    }
    if (f_.specials == Specials::fnuz && code == sign_bit()) {
      v.cls = Class::nan;
      return v;
    }
    if (f_.extended && magnitude == extended_infinity()) {
      v.cls = Class::inf;
      return v;
    }
    // value = significand * 2^(exponent - bias - m); q makes it an integer.
    const bool sub = f_.has_subnormals && field == 0;
    const Int significand = sub ? Int(mant) : Int(mant + (std::uint64_t{1} << m));
    const int exponent = (sub ? 1 : static_cast<int>(field)) - f_.bias - m;
    v.magnitude = significand << (exponent + q_);
    v.cls = v.magnitude == 0 ? Class::zero : Class::finite;
    v.subnormal = sub && mant != 0;
    return v;
  }

  // IEEE P3109's extended formats: the magnitude below the NaN is infinity
  // (0x7F signed, whose NaN is 0x80; 0xFE unsigned, whose NaN is 0xFF).
  std::uint64_t extended_infinity() const {
    const std::uint64_t all_ones = (std::uint64_t{1} << (f_.exponent_bits + f_.mantissa_bits)) - 1;
    return f_.specials == Specials::fn ? all_ones - 1 : all_ones;
  }

  // x < v for v on the grid.
  static bool below(const Exact& x, const Int& v) { return x.scaled < v; }

  Expected overflow(bool sign) const {
    const Rounding r = policy_.rounding;
    const bool toward_zero =
        r == Rounding::rtz || r == Rounding::rto || (r == Rounding::rup && sign) || (r == Rounding::rdn && !sign);
    const Flags flags = Flags(Flag::overflow) | Flag::inexact;
    // sat (SatFinite) and satprop (SatPropagate) both saturate a finite overflow.
    if (policy_.overflow != Overflow::nosat || toward_zero || f_.specials == Specials::none) {
      return max_value(sign, flags | Flag::saturated);
    }
    if (f_.specials == Specials::ieee) return {(sign ? sign_bit() : 0) | f_.infinity_code(), flags};
    if (f_.extended) return {(sign ? sign_bit() : 0) | extended_infinity(), flags};
    return created_nan(sign, flags);
  }

  // Whether an inexact x in (lo, hi) rounds to hi.
  bool choose_up(const Exact& x, const Int& lo, const Int& hi, bool lo_even) const {
    const Policy& p = policy_;
    switch (p.rounding) {
      case Rounding::rne:
      case Rounding::rna: {
        const Int mid = (lo + hi) >> 1;  // the grid is fine enough for midpoints
        if (x.scaled != mid) return x.scaled > mid;
        if (!x.exact) return true;
        return p.rounding == Rounding::rna || lo_even == false;
      }
      case Rounding::rtz: return false;
      case Rounding::rup: return !x.sign;
      case Rounding::rdn: return x.sign;
      case Rounding::rto: return lo_even;  // take the odd neighbour
      case Rounding::sr: {
        // floor(frac * 2^n) with frac = (x - lo) / (hi - lo); (hi - lo) / 2^n
        // is a whole number of grid steps.
        const int n = p.random_bit_count;
        const Int step = (hi - lo) >> n;
        const Int k = (x.scaled - lo) / step;
        const Int mask = pow2(n) - 1;
        return k + (Int(p.random_bits) & mask) > mask;
      }
      case Rounding::sr_rne:
      case Rounding::sr_rna:
      case Rounding::sr_rno: throw std::logic_error("the arithmetic reference models sr only");
    }
    return false;
  }

  bool is_tiny(const Exact& x) const {
    const Int min_normal = pow2(emin_ + t_);
    if (!below(x, min_normal)) return false;
    if (policy_.tininess == Tininess::before) return true;
    // After rounding: round onto the grid of the binade below 2^emin with
    // unbounded exponent (spacing 2^(emin-1-m)); tiny unless that gives 2^emin.
    const Int half_min = pow2(emin_ - 1 + t_);
    if (below(x, half_min)) return true;
    const Int spacing = pow2(emin_ - 1 - f_.mantissa_bits + t_);
    const Int k = x.scaled / spacing;  // grid index in [2^m, 2^(m+1))
    const Int lo = k * spacing;
    if (x.exact && x.scaled == lo) return true;
    return !(lo + spacing == min_normal && choose_up(x, lo, min_normal, (k & 1) == 0));
  }

  Format f_;
  int q_ = 0;
  int t_ = 0;
  int emin_ = 0;
  Policy policy_;
  std::vector<Value> values_;
  std::vector<std::pair<Int, std::uint64_t>> ascending_;  // nonnegative finite values at scale 2^-t
  std::pair<Int, std::uint64_t> above_max_;
};

}  // namespace fmtcheck::reference
