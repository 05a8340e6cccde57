// The one rounding core: exact unpacked value -> bits of the target format.
#pragma once

#include <cstdint>
#include <limits>

#include "fmtcheck/flags.hpp"
#include "fmtcheck/format.hpp"
#include "fmtcheck/policy.hpp"
#include "fmtcheck/unpacked.hpp"

namespace fmtcheck {

struct Conversion {
  std::uint64_t bits = 0;  // container bits of the target format
  Flags flags;
  friend bool operator==(const Conversion&, const Conversion&) = default;
};

namespace detail {

// Rounding works on codes: the truncated magnitude code c and its upper
// neighbour c + 1 are adjacent values in every binade (carry into the
// exponent field is the next binade), so every mode is a choice between c
// and c + 1. These pieces decide it; they are here, inline, because the
// common case (Rounder::round_inside) runs once per value in every batch
// and exhaustive sweep, where a call per value cost more than the rounding.

// Where the discarded part lies relative to half an ulp; the order matters
// (see classify_tail and round_away).
enum Tail : std::uint8_t { exact, below_half, half, above_half };

struct Truncated {
  std::uint64_t kept = 0;    // integer part of significand / 2^shift
  Tail tail = Tail::exact;   // where the discarded part lies relative to half an ulp
  std::uint64_t sr_top = 0;  // first sr_bits bits of the discarded part
};

// Without branches, which random data would mispredict: with the sticky bit
// appended below the discarded part rem (rem2 = 2 rem + sticky) and half an
// ulp doubled (half2 = 2^shift), the tail is exact, below, at or above half
// as rem2 is 0, below, equal to or above half2.
inline Tail classify_tail(std::uint64_t rem2, std::uint64_t half2) {
  return static_cast<Tail>(int{rem2 != 0} + int{rem2 >= half2} + int{rem2 > half2});
}

// Splits (significand + sticky) / 2^shift into integer and discarded parts,
// for 1 <= shift < 64 (formats keep at most 53 of the 64 significand bits).
// sr_bits: stochastic rounding's random bit count, 0 in the other modes.
inline Truncated split(std::uint64_t sig, bool sticky, std::int64_t shift, int sr_bits) {
  Truncated t;
  const std::uint64_t rem = sig & ((std::uint64_t{1} << shift) - 1);
  t.kept = sig >> shift;
  t.tail = classify_tail((rem << 1) | std::uint64_t{sticky}, std::uint64_t{1} << shift);
  if (sr_bits > 0) {
    t.sr_top = sr_bits <= shift ? rem >> (shift - sr_bits) : rem << (sr_bits - shift);
  }
  return t;
}

// A deterministic mode's choice as 16 bits, bit tail + 4 odd + 8 sign set
// where it takes c + 1: a shift instead of a switch, which the exhaustive
// tests, switching between policies, would mispredict. 0 for sr.
std::uint16_t away_bits(Rounding mode);

// Whether to take the upper neighbour c + 1 instead of the truncated code c:
// under stochastic rounding (sr_bits > 0) when the discarded bits plus the
// random ones carry out, otherwise as away_bits says.
inline bool round_away(std::uint16_t away, int sr_bits, std::uint32_t random_bits, const Truncated& t, bool sign,
                       bool code_odd) {
  if (sr_bits > 0) {
    const std::uint64_t mask = (std::uint64_t{1} << sr_bits) - 1;
    return t.tail != Tail::exact && t.sr_top + (random_bits & mask) > mask;
  }
  const unsigned index = unsigned{t.tail} | unsigned{code_odd} << 2 | unsigned{sign} << 3;
  return ((away >> index) & 1u) != 0;
}

}  // namespace detail

// A format and a policy with the facts the core asks for on every value
// derived once, and the results whole ranges of inputs share: every value
// that overflows gives the overflow result of its sign, and in a
// deterministic mode every value below half the smallest subnormal gives
// one result per sign too (nothing of it is kept and its tail is below
// half). A caller that rounds many values under one pair (a batch's
// fallback, an exhaustive test) builds one and calls it per value.
// round_to_format(x, f, p) rounds one value with the same code, deriving
// only the limits.
class Rounder {
 public:
  Rounder(const Format& f, const Policy& p) : Rounder(f, p, OneValue{}) { share_ranges(); }
  // It keeps pointers to the format and the policy, which must outlive it.
  Rounder(Format&&, const Policy&) = delete;
  Rounder(const Format&, Policy&&) = delete;

  // Rounds x; under stochastic rounding with policy().random_bits.
  [[nodiscard]] Conversion operator()(const Unpacked& x) const { return (*this)(x, policy_->random_bits); }
  // Rounds x; under stochastic rounding with these random bits.
  [[nodiscard]] Conversion operator()(const Unpacked& x, std::uint32_t random_bits) const {
    const bool takes_finite = x.kind == Unpacked::Kind::finite && !(x.source_subnormal && flush_inputs_) &&
                              (format_->is_signed || !x.sign);
    if (!takes_finite) [[unlikely]] return special(x);
    if (x.exponent < min_exponent_) [[unlikely]] {
      if (x.exponent < far_below_exponent_) return far_below_[x.sign];
      return below(x, random_bits);
    }
    if (x.exponent > max_exponent_) [[unlikely]] return overflow(x.sign);
    return round_inside(x, random_bits);
  }

  [[nodiscard]] const Format& format() const { return *format_; }
  [[nodiscard]] const Policy& policy() const { return *policy_; }
  [[nodiscard]] int min_exponent() const { return min_exponent_; }
  [[nodiscard]] int max_exponent() const { return max_exponent_; }
  [[nodiscard]] std::uint64_t max_finite_code() const { return max_finite_code_; }
  [[nodiscard]] std::uint64_t sign_bit() const { return sign_bit_; }
  [[nodiscard]] std::uint16_t away_bits() const { return away_bits_; }
  [[nodiscard]] int sr_bits() const { return sr_bits_; }
  // The container bits of a signed magnitude code.
  [[nodiscard]] std::uint64_t signed_code(bool sign, std::uint64_t magnitude) const {
    // A multiplication, not a conditional: random signs would mispredict a branch.
    return ((std::uint64_t{sign} * sign_bit_) | magnitude) << pad_bits_;
  }

 private:
  friend Conversion round_to_format(const Unpacked& x, const Format& f, const Policy& p);
  // The limits alone, for one value: the shared results cost a few
  // roundings, which one value would not repay.
  struct OneValue {};
  Rounder(const Format& f, const Policy& p, OneValue)
      : format_(&f),
        policy_(&p),
        min_exponent_(f.min_exponent()),
        max_exponent_(f.max_exponent()),
        max_finite_code_(f.max_finite_code()),
        sign_bit_(f.sign_bit()),
        pad_bits_(f.pad_bits),
        flush_inputs_(p.flush_inputs()),
        away_bits_(detail::away_bits(p.rounding)),
        sr_bits_(p.rounding == Rounding::sr ? p.random_bit_count : 0),
        shift_(63 - f.mantissa_bits),
        code_offset_((static_cast<std::uint64_t>((f.has_subnormals ? 1 : 0) - min_exponent_) << f.mantissa_bits) -
                     (std::uint64_t{1} << f.mantissa_bits)) {}
  void share_ranges();

  // A value inside the format's binades (emin <= e <= emax), the common
  // case, without data-dependent branches: it is never tiny, never zero and
  // never subnormal, so inexact is its only flag unless it overflows.
  [[nodiscard]] Conversion round_inside(const Unpacked& x, std::uint32_t random_bits) const {
    const detail::Truncated t = detail::split(x.significand, x.sticky, shift_, sr_bits_);
    std::uint64_t code = (static_cast<std::uint64_t>(std::int64_t{x.exponent}) << (63 - shift_)) + t.kept + code_offset_;
    code += std::uint64_t{detail::round_away(away_bits_, sr_bits_, random_bits, t, x.sign, (code & 1) != 0)};
    if (code > max_finite_code_) [[unlikely]] return overflow(x.sign);
    const auto inexact = static_cast<std::uint16_t>(std::uint16_t{t.tail != detail::Tail::exact}
                                                    << static_cast<unsigned>(Flag::inexact));
    return {signed_code(x.sign, code), Flags(inexact)};
  }
  // The other cases, out of line so that the common path saves no
  // registers for them: every input but a finite one the format takes, and
  // a value below the lowest binade.
  [[nodiscard]] Conversion special(const Unpacked& x) const;
  [[nodiscard]] Conversion below(const Unpacked& x, std::uint32_t random_bits) const;
  [[nodiscard]] Conversion overflow(bool sign) const;

  const Format* format_;
  const Policy* policy_;
  int min_exponent_;
  int max_exponent_;
  std::uint64_t max_finite_code_;
  std::uint64_t sign_bit_;
  int pad_bits_;  // where the code sits in its container (Format::to_storage)
  bool flush_inputs_;
  std::uint16_t away_bits_;  // detail::away_bits of the policy's mode
  int sr_bits_;              // random bits under stochastic rounding, else 0
  // Inside the binades: the significand's bits below the format's last
  // mantissa bit, and what the exponent adds to the kept bits to make the
  // code, (exponent << mantissa_bits) + kept + code_offset_ (mod 2^64).
  int shift_;
  std::uint64_t code_offset_;
  // The shared results, by sign: values with an exponent below
  // far_below_exponent_ give far_below_ (none while it is INT_MIN), and
  // overflows give overflow_ when shared_overflow_.
  int far_below_exponent_ = std::numeric_limits<int>::min();
  bool shared_overflow_ = false;
  Conversion far_below_[2];
  Conversion overflow_[2];
};

// Rounds x to f under policy p. Every conversion and every arithmetic result
// in fmtcheck goes through here.
Conversion round_to_format(const Unpacked& x, const Format& f, const Policy& p);

}  // namespace fmtcheck
