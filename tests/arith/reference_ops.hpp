// IEEE 754 operations on the exact reference (reference.hpp): operands are a
// format's codes, the exact result is formed with Boost integers and rounded
// by the reference table. Special cases are written from the standard
// (§6.1-§6.3, §7.2-§7.3), independently of lib/src/arith/.
#pragma once

#include <boost/multiprecision/integer.hpp>

#include "reference.hpp"

namespace fmtcheck::reference {

class Arithmetic {
 public:
  explicit Arithmetic(Table& table) : t_(table) {}
  void set_policy(const Policy& p) { t_.set_policy(p); }

  Expected add(std::uint64_t a, std::uint64_t b) const { return add_signed(a, b, false); }
  Expected sub(std::uint64_t a, std::uint64_t b) const { return add_signed(a, b, true); }

  Expected mul(std::uint64_t a_code, std::uint64_t b_code) const {
    Flags flags;
    const Operand a = operand(a_code, flags), b = operand(b_code, flags);
    if (auto n = nan({&a, &b})) return with(*n, flags);
    const bool sign = a.sign != b.sign;
    if (a.cls == Class::inf || b.cls == Class::inf) {
      if (a.cls == Class::zero || b.cls == Class::zero) return with(t_.invalid(), flags);
      return with(t_.infinity(sign), flags);
    }
    if (a.cls == Class::zero || b.cls == Class::zero) return with(t_.zero(sign), flags);
    return with(t_.round(t_.on_grid(signed_value(sign, a.magnitude * b.magnitude), 2 * t_.q())), flags);
  }

  Expected div(std::uint64_t a_code, std::uint64_t b_code) const {
    Flags flags;
    const Operand a = operand(a_code, flags), b = operand(b_code, flags);
    if (auto n = nan({&a, &b})) return with(*n, flags);
    const bool sign = a.sign != b.sign;
    if ((a.cls == Class::inf && b.cls == Class::inf) || (a.cls == Class::zero && b.cls == Class::zero)) {
      return with(t_.invalid(), flags);
    }
    if (a.cls == Class::inf) return with(t_.infinity(sign), flags);
    if (b.cls == Class::inf || a.cls == Class::zero) return with(t_.zero(sign), flags);
    if (b.cls == Class::zero) return with(t_.infinity(sign), flags | Flag::divide_by_zero);
    // |a/b| * 2^T, both operands on the same 2^-q grid.
    const Int numerator = a.magnitude << t_.t();
    Exact x;
    x.sign = sign;
    x.scaled = numerator / b.magnitude;
    x.exact = x.scaled * b.magnitude == numerator;
    return with(t_.round(x), flags);
  }

  Expected sqrt(std::uint64_t a_code) const {
    Flags flags;
    const Operand a = operand(a_code, flags);
    if (auto n = nan({&a})) return with(*n, flags);
    if (a.cls == Class::zero) return with(t_.zero(a.sign), flags);
    if (a.sign) return with(t_.invalid(), flags);
    if (a.cls == Class::inf) return with(t_.infinity(false), flags);
    // sqrt(m * 2^-q) * 2^T = sqrt(m * 2^(2T - q)).
    const Int radicand = a.magnitude << (2 * t_.t() - t_.q());
    Exact x;
    x.scaled = boost::multiprecision::sqrt(radicand);
    x.exact = x.scaled * x.scaled == radicand;
    return with(t_.round(x), flags);
  }

  Expected fma(std::uint64_t a_code, std::uint64_t b_code, std::uint64_t c_code) const {
    Flags flags;
    const Operand a = operand(a_code, flags), b = operand(b_code, flags), c = operand(c_code, flags);
    const bool zero_times_inf = (a.cls == Class::inf && b.cls == Class::zero) || (a.cls == Class::zero && b.cls == Class::inf);
    if (zero_times_inf) flags |= Flag::invalid;
    if (auto n = nan({&a, &b, &c})) return with(*n, flags);
    if (zero_times_inf) return with(t_.invalid(), flags);
    const bool psign = a.sign != b.sign;
    if (a.cls == Class::inf || b.cls == Class::inf) {
      if (c.cls == Class::inf && c.sign != psign) return with(t_.invalid(), flags);
      return with(t_.infinity(psign), flags);
    }
    if (c.cls == Class::inf) return with(t_.infinity(c.sign), flags);
    const bool product_zero = a.cls == Class::zero || b.cls == Class::zero;
    if (product_zero && c.cls == Class::zero) return with(t_.zero(zero_sign(psign, c.sign)), flags);
    const Int product = product_zero ? Int(0) : signed_value(psign, a.magnitude * b.magnitude);
    const Int sum = product + (signed_value(c.sign, c.magnitude) << t_.q());
    if (sum == 0) return with(t_.zero(zero_sign(psign, c.sign)), flags);
    return with(t_.round(t_.on_grid(sum, 2 * t_.q())), flags);
  }

  // Conversion of a code of `from` into this table's format.
  Expected convert(const Table& from, std::uint64_t code) const {
    const Value& v = from.value(code);
    switch (v.cls) {
      case Class::nan: return {};  // NaN payload rules are tested in the conversion suites
      case Class::inf: return t_.infinity(v.sign);
      case Class::zero: return t_.zero(v.sign);
      case Class::finite:
        if (v.subnormal && t_.policy().flush_inputs()) {
          return t_.zero(v.sign, t_.format().has_zero() ? Flags(Flag::flushed) | Flag::tiny_to_zero : Flags(Flag::flushed));
        }
        return t_.round(t_.on_grid(signed_value(v.sign, v.magnitude), from.q()));
    }
    return {};
  }

 private:
  struct Operand {
    Class cls;
    bool sign;
    Int magnitude;
    bool signaling;
    std::uint64_t code;
  };

  Operand operand(std::uint64_t code, Flags& flags) const {
    const Value& v = t_.value(code);
    Operand o{v.cls, v.sign, v.magnitude, v.signaling, code};
    if (v.subnormal && t_.policy().flush_inputs()) {
      o.cls = Class::zero;
      o.magnitude = 0;
      flags |= Flag::flushed;
    }
    return o;
  }

  std::optional<Expected> nan(std::initializer_list<const Operand*> ops) const {
    const Operand* first = nullptr;
    bool signaling = false;
    for (const Operand* o : ops) {
      if (o->cls != Class::nan) continue;
      if (!first) first = o;
      signaling = signaling || o->signaling;
    }
    if (!first) return std::nullopt;
    const std::uint64_t mantissa = first->code & ((std::uint64_t{1} << t_.format().mantissa_bits) - 1);
    Expected e = t_.nan(first->sign, mantissa);
    if (signaling) e.flags |= Flag::invalid;
    return e;
  }

  Expected add_signed(std::uint64_t a_code, std::uint64_t b_code, bool negate_b) const {
    Flags flags;
    const Operand a = operand(a_code, flags);
    Operand b = operand(b_code, flags);
    if (auto n = nan({&a, &b})) return with(*n, flags);
    if (negate_b) b.sign = !b.sign;
    if (a.cls == Class::inf && b.cls == Class::inf && a.sign != b.sign) return with(t_.invalid(), flags);
    if (a.cls == Class::inf || b.cls == Class::inf) return with(t_.infinity(a.cls == Class::inf ? a.sign : b.sign), flags);
    const Int sum = signed_value(a.sign, a.magnitude) + signed_value(b.sign, b.magnitude);
    if (sum == 0) {
      const bool both_zero = a.cls == Class::zero && b.cls == Class::zero;
      return with(t_.zero(both_zero ? zero_sign(a.sign, b.sign) : t_.policy().rounding == Rounding::rdn), flags);
    }
    return with(t_.round(t_.on_grid(sum, t_.q())), flags);
  }

  bool zero_sign(bool x, bool y) const { return x == y ? x : t_.policy().rounding == Rounding::rdn; }
  static Int signed_value(bool sign, const Int& magnitude) { return sign ? Int(-magnitude) : magnitude; }
  static Expected with(Expected e, Flags flags) {
    e.flags |= flags;
    return e;
  }

  Table& t_;
};

}  // namespace fmtcheck::reference
