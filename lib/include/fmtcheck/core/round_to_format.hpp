// The one rounding core: exact unpacked value -> bits of the target format.
#pragma once

#include <cstdint>
#include <limits>

#include "fmtcheck/core/flags.hpp"
#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/policy.hpp"
#include "fmtcheck/core/unpacked.hpp"

namespace fmtcheck {

struct Conversion {
  std::uint64_t bits = 0;  // container bits of the target format
  Flags flags;
  friend bool operator==(const Conversion&, const Conversion&) = default;
};

// A format and a policy with the facts the core asks for on every value
// derived once, and the results whole ranges of inputs share: every value
// that overflows gives the overflow result of its sign, and in a
// deterministic mode every value below half the smallest subnormal gives
// one result per sign too (nothing of it is kept and its tail is below
// half); under stochastic rounding with k random bits, every value below
// 2^-k times the smallest subnormal (no draw can round it up). A caller
// that rounds many values under one pair (a batch's fallback, an
// exhaustive test) builds one and calls it per value.
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
  [[nodiscard]] Conversion operator()(const Unpacked& x, std::uint32_t random_bits) const;

  // The result this Rounder shares among every value with x's kind, sign,
  // exponent and source_subnormal flag, whatever its significand and
  // sticky bit: the far-below or overflow result of x's sign, or an
  // unsigned format's result for a negative value, the ones operator()
  // gives without rounding. Null where it rounds such values one by one.
  // A caller with a whole binade of inputs (an exhaustive test walking
  // float32 bit patterns in order) asks once for all of them.
  [[nodiscard]] const Conversion* shared_result(const Unpacked& x) const;

  // Whether every value with x's kind, sign, exponent and source_subnormal
  // flag whose significand differs from x's only in its lowest free_bits
  // bits (its sticky bit too) gets x's result, for a value inside the
  // format's binades in a deterministic mode: those bits lie below the
  // rounding position and the fixed discarded bits above them are neither
  // all zero (exact or below half) nor half's pattern (half or above), so
  // every such value keeps the same code and falls on the same side of
  // half. False wherever that does not hold or the value is not rounded
  // inside the binades (shared_result covers the ranges beyond). A caller
  // with a run of such values (consecutive float32 bit patterns) rounds
  // the first and takes its result for all of them.
  [[nodiscard]] bool shares_low_bits(const Unpacked& x, int free_bits) const;

  [[nodiscard]] const Format& format() const { return *format_; }
  [[nodiscard]] const Policy& policy() const { return *policy_; }
  [[nodiscard]] int min_exponent() const { return min_exponent_; }
  [[nodiscard]] int max_exponent() const { return max_exponent_; }
  [[nodiscard]] std::uint64_t max_finite_code() const { return max_finite_code_; }
  [[nodiscard]] std::uint64_t sign_bit() const { return sign_bit_; }

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
        shift_(63 - f.mantissa_bits),
        code_offset_((static_cast<std::uint64_t>((f.has_subnormals ? 1 : 0) - min_exponent_) << f.mantissa_bits) -
                     (std::uint64_t{1} << f.mantissa_bits)) {}
  void share_ranges();

  // Whether x is a value the format takes and rounds: finite, not flushed
  // by daz, not negative into an unsigned format. Everything else is a
  // special case (round_special).
  [[nodiscard]] bool takes_finite(const Unpacked& x) const {
    return x.kind == Unpacked::Kind::finite && !(x.source_subnormal && policy_->flush_inputs()) &&
           (format_->is_signed || !x.sign);
  }
  // A value inside the format's binades, the common case.
  [[nodiscard]] Conversion round_inside(const Unpacked& x, std::uint32_t random_bits) const;
  [[nodiscard]] Conversion overflow(bool sign) const;

  const Format* format_;
  const Policy* policy_;
  int min_exponent_;
  int max_exponent_;
  std::uint64_t max_finite_code_;
  std::uint64_t sign_bit_;
  // Inside the binades: the significand's bits below the format's last
  // mantissa bit, and what the exponent adds to the kept bits to make the
  // code, (exponent << mantissa_bits) + kept + code_offset_ (mod 2^64).
  int shift_;
  std::uint64_t code_offset_;
  // The shared results, by sign: values with an exponent below
  // far_below_exponent_ give far_below_ (none while it is INT_MIN);
  // overflows give overflow_, and negative values into an unsigned format
  // negative_, when ranges_shared_ (share_ranges has run).
  int far_below_exponent_ = std::numeric_limits<int>::min();
  bool ranges_shared_ = false;
  Conversion far_below_[2];
  Conversion overflow_[2];
  Conversion negative_;
};

// Rounds x to f under policy p. Every conversion and every arithmetic result
// in fmtcheck goes through here.
Conversion round_to_format(const Unpacked& x, const Format& f, const Policy& p);

}  // namespace fmtcheck
