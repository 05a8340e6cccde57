// The one rounding core: exact unpacked value -> bits of the target format,
// after SoftFloat's roundPack. Header-only, so that GPU kernels compile the
// same code (FMTCHECK_HD; cuda/src/emulator/).
//
// Rounding works on codes: the truncated magnitude code c and its upper
// neighbour c + 1 are adjacent values in every binade (carry into the
// exponent field is the next binade), so every mode is a choice between c and
// c + 1, and "even"/"odd" is the parity of the code (which also covers
// formats without mantissa bits, such as E8M0).
#pragma once

#include <climits>
#include <cstdint>

#include "fmtcheck/core/flags.hpp"
#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/host_device.hpp"
#include "fmtcheck/core/nan_rules.hpp"
#include "fmtcheck/core/policy.hpp"
#include "fmtcheck/core/unpacked.hpp"

namespace fmtcheck {

struct Conversion {
  std::uint64_t bits = 0;  // container bits of the target format
  Flags flags;
  friend bool operator==(const Conversion&, const Conversion&) = default;
};

namespace detail {

// Where the discarded part lies relative to half an ulp; the order matters
// (see classify_tail and round_away).
enum Tail : std::uint8_t { exact, below_half, half, above_half };

struct Truncated {
  std::uint64_t kept = 0;    // integer part of significand / 2^shift
  Tail tail = Tail::exact;   // where the discarded part lies relative to half an ulp
  std::uint64_t sr_top = 0;  // first random_bit_count bits of the discarded part
  Tail sr_rest = Tail::exact;  // the bits below those, relative to half of sr_top's last bit
};

// Without branches, which random data would mispredict: with the sticky bit
// appended below the discarded part rem (rem2 = 2 rem + sticky) and half an
// ulp doubled (half2 = 2^shift), the tail is exact, below, at or above half
// as rem2 is 0, below, equal to or above half2.
FMTCHECK_HD inline Tail classify_tail(std::uint64_t rem2, std::uint64_t half2) {
  return static_cast<Tail>(int{rem2 != 0} + int{rem2 >= half2} + int{rem2 > half2});
}

// Where the significand's low_bits lowest bits and the sticky bit lie
// relative to half a unit of the bit above them (low_bits <= 0: only the
// sticky bit lies below).
FMTCHECK_HD inline Tail rest_below(std::uint64_t sig, bool sticky, std::int64_t low_bits) {
  if (low_bits <= 0) return sticky ? Tail::below_half : Tail::exact;
  if (low_bits < 64) {
    const std::uint64_t low = sig & ((std::uint64_t{1} << low_bits) - 1);
    return classify_tail((low << 1) | std::uint64_t{sticky}, std::uint64_t{1} << low_bits);
  }
  // As truncate_all's shift of 64: the last bit joins the sticky bit.
  if (low_bits == 64) return classify_tail(((sig >> 1) << 1) | std::uint64_t{sticky || (sig & 1) != 0}, std::uint64_t{1} << 63);
  return (sig != 0 || sticky) ? Tail::below_half : Tail::exact;
}

// A shift of 64 or more: the whole significand is discarded (values far
// below the format's smallest subnormal).
FMTCHECK_HD inline Truncated truncate_all(std::uint64_t sig, bool sticky, std::int64_t shift, int sr_bits) {
  Truncated t;
  if (shift == 64) {
    // Drop the significand's last bit into the sticky bit: the same tail
    // against half = 2^63 as against 2^62 one bit lower.
    t.tail = rest_below(sig, sticky, 64);
  } else {
    t.tail = (sig != 0 || sticky) ? Tail::below_half : Tail::exact;
  }
  if (sr_bits > 0) {
    if (shift - sr_bits < 64) t.sr_top = sig >> (shift - sr_bits);
    t.sr_rest = rest_below(sig, sticky, shift - sr_bits);
  }
  return t;
}

// Splits (significand + sticky) / 2^shift into integer and discarded parts,
// for 1 <= shift < 64 (formats keep at most 53 of the 64 significand bits).
FMTCHECK_HD inline Truncated split(std::uint64_t sig, bool sticky, std::int64_t shift, int sr_bits) {
  Truncated t;
  const std::uint64_t rem = sig & ((std::uint64_t{1} << shift) - 1);
  t.kept = sig >> shift;
  t.tail = classify_tail((rem << 1) | std::uint64_t{sticky}, std::uint64_t{1} << shift);
  if (sr_bits > 0) {
    t.sr_top = sr_bits <= shift ? rem >> (shift - sr_bits) : rem << (sr_bits - shift);
    t.sr_rest = rest_below(sig, sticky, shift - sr_bits);
  }
  return t;
}

// The same for any shift >= 1.
FMTCHECK_HD inline Truncated truncate(std::uint64_t sig, bool sticky, std::int64_t shift, int sr_bits) {
  if (shift >= 64) [[unlikely]] return truncate_all(sig, sticky, shift, sr_bits);
  return split(sig, sticky, shift, sr_bits);
}

// Whether a deterministic mode takes the upper neighbour c + 1 instead of
// the truncated code c.
constexpr bool deterministic_away(Rounding mode, Tail tail, bool sign, bool code_odd) {
  const bool inexact = tail != Tail::exact;
  switch (mode) {
    case Rounding::rne: return tail + int{code_odd} > Tail::half;  // above half, or a tie with c odd
    case Rounding::rna: return tail >= Tail::half;
    case Rounding::rtz: return false;
    case Rounding::rup: return inexact && !sign;
    case Rounding::rdn: return inexact && sign;
    case Rounding::rto: return inexact && !code_odd;
    case Rounding::sr:
    case Rounding::sr_rne:
    case Rounding::sr_rna:
    case Rounding::sr_rno: break;
  }
  return false;
}

// deterministic_away of a mode as a table of 16 bits, bit tail + 4 odd +
// 8 sign, made once per Rounder: a shift instead of an indirect jump, which
// the exhaustive tests, switching between policies, would mispredict.
constexpr std::uint16_t away_bits(Rounding mode) {
  std::uint16_t bits = 0;
  for (unsigned i = 0; i < 16; ++i) {
    const bool away = deterministic_away(mode, static_cast<Tail>(i & 3), (i & 8) != 0, (i & 4) != 0);
    bits = static_cast<std::uint16_t>(bits | (unsigned{away} << i));
  }
  return bits;
}

// away_bits of each mode, evaluated at compile time (a Rounder made for one
// value, as round_to_format does per result, pays a switch, not the loop).
FMTCHECK_HD inline std::uint16_t away_table(Rounding mode) {
  switch (mode) {
    case Rounding::rne: { constexpr std::uint16_t b = away_bits(Rounding::rne); return b; }
    case Rounding::rna: { constexpr std::uint16_t b = away_bits(Rounding::rna); return b; }
    case Rounding::rtz: return 0;
    case Rounding::rup: { constexpr std::uint16_t b = away_bits(Rounding::rup); return b; }
    case Rounding::rdn: { constexpr std::uint16_t b = away_bits(Rounding::rdn); return b; }
    case Rounding::rto: { constexpr std::uint16_t b = away_bits(Rounding::rto); return b; }
    default: return 0;  // the stochastic modes decide from their draw
  }
}

}  // namespace detail

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
// only the limits. It holds its encoding and policy by value and is
// trivially copyable: a GPU kernel takes one as an argument and rounds with
// the same code as the CPU (cuda/src/emulator/).
class Rounder {
 public:
  FMTCHECK_HD Rounder(const Encoding& f, const Policy& p) : Rounder(f, p, OneValue{}) { share_ranges(); }

  // Rounds x; under stochastic rounding with policy().random_bits.
  [[nodiscard]] FMTCHECK_HD Conversion operator()(const Unpacked& x) const { return (*this)(x, policy_.random_bits); }
  // Rounds x; under stochastic rounding with these random bits.
  [[nodiscard]] FMTCHECK_HD Conversion operator()(const Unpacked& x, std::uint32_t random_bits) const;

  // The result this Rounder shares among every value with x's kind, sign,
  // exponent and source_subnormal flag, whatever its significand and
  // sticky bit: the far-below or overflow result of x's sign, or an
  // unsigned format's result for a negative value, the ones operator()
  // gives without rounding. Null where it rounds such values one by one.
  // A caller with a whole binade of inputs (an exhaustive test walking
  // float32 bit patterns in order) asks once for all of them.
  [[nodiscard]] FMTCHECK_HD const Conversion* shared_result(const Unpacked& x) const;

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
  [[nodiscard]] FMTCHECK_HD bool shares_low_bits(const Unpacked& x, int free_bits) const;

  [[nodiscard]] FMTCHECK_HD const Encoding& format() const { return format_; }
  [[nodiscard]] FMTCHECK_HD const Policy& policy() const { return policy_; }
  [[nodiscard]] FMTCHECK_HD int min_exponent() const { return min_exponent_; }
  [[nodiscard]] FMTCHECK_HD int max_exponent() const { return max_exponent_; }
  [[nodiscard]] FMTCHECK_HD std::uint64_t max_finite_code() const { return max_finite_code_; }
  [[nodiscard]] FMTCHECK_HD std::uint64_t sign_bit() const { return sign_bit_; }

  // The cases out of the common path (definitions below the class).
  [[nodiscard]] FMTCHECK_HD Conversion overflow_result(bool sign) const;
  [[nodiscard]] FMTCHECK_HD Conversion round_below(const Unpacked& x, std::uint32_t random_bits) const;
  [[nodiscard]] FMTCHECK_HD Conversion round_special(const Unpacked& x) const;

 private:
  friend FMTCHECK_HD Conversion round_to_format(const Unpacked& x, const Encoding& f, const Policy& p);
  // The limits alone, for one value: the shared results cost a few
  // roundings, which one value would not repay.
  struct OneValue {};
  FMTCHECK_HD Rounder(const Encoding& f, const Policy& p, OneValue)
      : format_(f),
        policy_(p),
        away_bits_(detail::away_table(p.rounding)),
        min_exponent_(f.min_exponent()),
        max_exponent_(f.max_exponent()),
        max_finite_code_(f.max_finite_code()),
        sign_bit_(f.sign_bit()),
        shift_(63 - f.mantissa_bits),
        code_offset_((static_cast<std::uint64_t>((f.has_subnormals ? 1 : 0) - min_exponent_) << f.mantissa_bits) -
                     (std::uint64_t{1} << f.mantissa_bits)) {}
  FMTCHECK_HD void share_ranges();

  // Whether x is a value the format takes and rounds: finite, not flushed
  // by daz, not negative into an unsigned format. Everything else is a
  // special case (round_special).
  [[nodiscard]] FMTCHECK_HD bool takes_finite(const Unpacked& x) const {
    return x.kind == Unpacked::Kind::finite && !(x.source_subnormal && policy_.flush_inputs()) &&
           (format_.is_signed || !x.sign);
  }
  // A value inside the format's binades, the common case.
  [[nodiscard]] FMTCHECK_HD Conversion round_inside(const Unpacked& x, std::uint32_t random_bits) const;
  [[nodiscard]] FMTCHECK_HD Conversion overflow(bool sign) const;
  // Whether to take the upper neighbour c + 1 of the truncated code c.
  [[nodiscard]] FMTCHECK_HD bool round_away(std::uint32_t random_bits, const detail::Truncated& t, bool sign,
                                            bool code_odd) const;
  [[nodiscard]] FMTCHECK_HD std::uint64_t signed_code(bool sign, std::uint64_t magnitude) const {
    // A multiplication, not a conditional: random signs would mispredict a branch.
    return format_.to_storage((std::uint64_t{sign} * sign_bit_) | magnitude);
  }
  [[nodiscard]] FMTCHECK_HD Conversion nan_result(bool sign, Flags flags) const;
  [[nodiscard]] FMTCHECK_HD Conversion zero_result(bool sign, Flags flags) const;
  [[nodiscard]] FMTCHECK_HD Conversion infinity_result(bool sign) const;

  Encoding format_;
  Policy policy_;
  // The policy's deterministic mode as detail::away_bits' table.
  std::uint16_t away_bits_;
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
  int far_below_exponent_ = INT_MIN;
  bool ranges_shared_ = false;
  Conversion far_below_[2];
  Conversion overflow_[2];
  Conversion negative_;
};

// Rounds x to f under policy p. Every conversion and every arithmetic result
// in fmtcheck goes through here.
FMTCHECK_HD Conversion round_to_format(const Unpacked& x, const Encoding& f, const Policy& p);

FMTCHECK_HD inline bool Rounder::round_away(std::uint32_t random_bits, const detail::Truncated& t, bool sign,
                                            bool code_odd) const {
  using detail::Tail;
  const Policy& p = policy_;
  if (is_stochastic(p.rounding)) {
    const std::uint64_t mask = (std::uint64_t{1} << p.random_bit_count) - 1;
    // sr-rne, sr-rna and sr-rno first round the discarded fraction to
    // random_bit_count bits, to nearest with ties to even, away or to odd;
    // it may become 2^n, which every draw rounds away.
    const bool top_odd = (t.sr_top & 1) != 0;
    const bool up = p.rounding == Rounding::sr_rne   ? t.sr_rest + int{top_odd} > Tail::half
                    : p.rounding == Rounding::sr_rna ? t.sr_rest >= Tail::half
                    : p.rounding == Rounding::sr_rno ? t.sr_rest + int{!top_odd} > Tail::half
                                                     : false;
    return t.tail != Tail::exact && t.sr_top + std::uint64_t{up} + (random_bits & mask) > mask;
  }
  const unsigned index = unsigned{t.tail} | unsigned{code_odd} << 2 | unsigned{sign} << 3;
  return ((away_bits_ >> index) & 1u) != 0;
}

// A NaN made from a non-NaN input (infinity into E4M3, overflow without
// saturation, a negative value into an unsigned format).
FMTCHECK_HD inline Conversion Rounder::nan_result(bool sign, Flags flags) const {
  const Encoding& f = format_;
  flags |= f.has_nan() ? Flags(Flag::nan_produced) : Flags(Flag::invalid);
  return {f.to_storage(created_nan_code(f, policy_.nan, sign)), flags};
}

FMTCHECK_HD inline Conversion Rounder::zero_result(bool sign, Flags flags) const {
  const Encoding& f = format_;
  if (!f.has_zero()) return nan_result(sign, flags | Flag::invalid);
  return {signed_code(sign && f.has_negative_zero(), 0), flags};
}

// Overflow of a finite value follows IEEE 754 under nosat: directed modes
// that round toward zero give the largest finite value, the others
// infinity; a format without infinity gives NaN instead, and one without
// NaN too (MX FP6/FP4) always saturates. sat and satprop give the largest
// finite value.
FMTCHECK_NOINLINE FMTCHECK_HD inline Conversion Rounder::overflow_result(bool sign) const {
  const Encoding& f = format_;
  const Policy& p = policy_;
  const Flags flags = Flags(Flag::overflow) | Flag::inexact;
  const Rounding mode = p.rounding;
  const bool toward_zero = mode == Rounding::rtz || mode == Rounding::rto ||
                           (mode == Rounding::rup && sign) || (mode == Rounding::rdn && !sign);
  if (p.overflow != Overflow::nosat || toward_zero || f.specials == Specials::none) {
    return {signed_code(sign, max_finite_code_), flags | Flag::saturated};
  }
  if (f.has_inf()) return {signed_code(sign, f.infinity_code()), flags};
  return nan_result(sign, flags);
}

// An infinite input: +-max under sat; infinity (NaN in a format without
// infinity) under nosat and satprop, which saturates finite values only.
FMTCHECK_HD inline Conversion Rounder::infinity_result(bool sign) const {
  const Encoding& f = format_;
  if (!f.is_signed && sign) return nan_result(sign, Flag::invalid);
  if (policy_.overflow == Overflow::sat) return {signed_code(sign, max_finite_code_), Flag::saturated};
  if (f.has_inf()) return {signed_code(sign, f.infinity_code()), {}};
  if (f.specials == Specials::none) {
    return {signed_code(sign, max_finite_code_), Flags(Flag::saturated) | Flag::invalid};
  }
  return nan_result(sign, Flag::invalid);
}

// A value below the lowest binade (e < emin): subnormal codes, tininess,
// ftz. Out of the common path.
FMTCHECK_NOINLINE FMTCHECK_HD inline Conversion Rounder::round_below(const Unpacked& x,
                                                                    std::uint32_t random_bits) const {
  using detail::Tail;
  const Encoding& f = format_;
  const Policy& p = policy_;
  const int m = f.mantissa_bits;
  const std::int64_t e = x.exponent;
  const std::int64_t emin = min_exponent_;
  // Tininess: before rounding, the value is below 2^emin; after rounding, it
  // is still below 2^emin when rounded to full precision with unbounded
  // exponent range (only the top ulp of the binade below can reach 2^emin).
  bool tiny = true;
  if (p.tininess == Tininess::after && e == emin - 1) {
    const detail::Truncated full = detail::split(x.significand, x.sticky, 63 - m, p.random_bit_count);
    const std::uint64_t top = (std::uint64_t{2} << m) - 1;
    if (full.kept == top && round_away(random_bits, full, x.sign, (top & 1) != 0)) tiny = false;
  }
  if (!f.has_subnormals) {
    // Nothing is representable below the lowest binade (E8M0 has no zero):
    // every mode gives the smallest value, and ftz has no zero to flush to.
    return {signed_code(x.sign, 0), tiny ? Flags(Flag::inexact) | Flag::underflow : Flags(Flag::inexact)};
  }

  const detail::Truncated t = detail::truncate(x.significand, x.sticky, 63 - m + (emin - e), p.random_bit_count);
  std::uint64_t code = t.kept;
  if (round_away(random_bits, t, x.sign, (code & 1) != 0)) ++code;
  if (code > max_finite_code_) return overflow_result(x.sign);

  Flags flags;
  const bool inexact = t.tail != Tail::exact;
  if (inexact) flags |= Flag::inexact;

  if (tiny && inexact) flags |= Flag::underflow;

  if (tiny && p.flush_results()) {
    return zero_result(x.sign, flags | Flag::underflow | Flag::inexact | Flag::flushed | Flag::tiny_to_zero);
  }
  if (code == 0) return zero_result(x.sign, flags | Flag::tiny_to_zero);
  if (code < (std::uint64_t{1} << m)) flags |= Flag::subnormal;
  return {signed_code(x.sign, code), flags};
}

// Every input but a finite one the format can take: out of the common path,
// so that path keeps a small stack frame.
FMTCHECK_NOINLINE FMTCHECK_HD inline Conversion Rounder::round_special(const Unpacked& x) const {
  const Encoding& f = format_;
  switch (x.kind) {
    case Unpacked::Kind::nan: {
      // A NaN input is no new NaN; only a signaling one, or a format that
      // cannot hold NaN, makes the conversion invalid.
      const bool invalid = x.signaling || !f.has_nan();
      return {f.to_storage(nan_code(f, policy_.nan, x.sign, x.significand)),
              invalid ? Flags(Flag::invalid) : Flags()};
    }
    case Unpacked::Kind::inf:
      return infinity_result(x.sign);
    case Unpacked::Kind::zero:
      return zero_result(x.sign, {});
    case Unpacked::Kind::finite:
      if (x.source_subnormal && policy_.flush_inputs()) {
        // The input becomes zero; only a format with a zero gives a zero result.
        return zero_result(x.sign, f.has_zero() ? Flags(Flag::flushed) | Flag::tiny_to_zero : Flags(Flag::flushed));
      }
      return nan_result(x.sign, Flag::invalid);  // a negative value into an unsigned format
  }
  return {};
}


// The common case, a value inside the format's binades (emin <= e <= emax),
// written without data-dependent branches from the precomputed facts alone:
// it is never tiny, never zero and never subnormal, so inexact is its only
// flag unless it overflows.
FMTCHECK_HD inline Conversion Rounder::round_inside(const Unpacked& x, std::uint32_t random_bits) const {
  const detail::Truncated t = detail::split(x.significand, x.sticky, shift_, policy_.random_bit_count);
  std::uint64_t code = (static_cast<std::uint64_t>(std::int64_t{x.exponent}) << (63 - shift_)) + t.kept + code_offset_;
  code += std::uint64_t{round_away(random_bits, t, x.sign, (code & 1) != 0)};
  if (code > max_finite_code_) return overflow(x.sign);
  return {signed_code(x.sign, code), Flags(static_cast<std::uint16_t>(std::uint16_t{t.tail != detail::Tail::exact}
                                                                              << static_cast<unsigned>(Flag::inexact)))};
}

// Each case but the common one is a call out of this function, so that it
// saves no registers for them.
FMTCHECK_HD inline Conversion Rounder::operator()(const Unpacked& x, std::uint32_t random_bits) const {
  if (!takes_finite(x)) return round_special(x);
  if (x.exponent < min_exponent_) {
    if (x.exponent < far_below_exponent_) return far_below_[x.sign];
    return round_below(x, random_bits);
  }
  if (x.exponent > max_exponent_) return overflow(x.sign);
  return round_inside(x, random_bits);
}

// The results operator() gives whole binades without rounding: its shared
// ones, and round_special's for a negative value into an unsigned format.
FMTCHECK_HD inline const Conversion* Rounder::shared_result(const Unpacked& x) const {
  if (!takes_finite(x)) {
    // A finite value the format does not take is flushed by daz (zero) or,
    // failing that, a negative one into an unsigned format: one result.
    const bool refused_negative = x.kind == Unpacked::Kind::finite && !(x.source_subnormal && policy_.flush_inputs());
    return refused_negative && ranges_shared_ ? &negative_ : nullptr;
  }
  if (x.exponent < far_below_exponent_) return &far_below_[x.sign];
  if (x.exponent > max_exponent_ && ranges_shared_) return &overflow_[x.sign];
  return nullptr;
}

FMTCHECK_HD inline bool Rounder::shares_low_bits(const Unpacked& x, int free_bits) const {
  if (!takes_finite(x) || is_stochastic(policy_.rounding)) return false;
  if (x.exponent < min_exponent_ || x.exponent > max_exponent_) return false;
  if (free_bits < 0 || free_bits >= shift_) return false;  // the kept bits would vary too
  const std::uint64_t discarded = x.significand & ((std::uint64_t{1} << shift_) - 1);
  const std::uint64_t fixed = discarded >> free_bits;
  const std::uint64_t half = (std::uint64_t{1} << (shift_ - 1)) >> free_bits;
  return fixed != 0 && fixed != half;
}

FMTCHECK_HD inline Conversion Rounder::overflow(bool sign) const {
  return ranges_shared_ ? overflow_[sign] : overflow_result(sign);
}

FMTCHECK_HD inline void Rounder::share_ranges() {
  for (const bool sign : {false, true}) overflow_[sign] = overflow_result(sign);
  Unpacked negative;  // any negative value, into an unsigned format
  negative.kind = Unpacked::Kind::finite;
  negative.sign = true;
  negative.significand = std::uint64_t{1} << 63;
  if (!format_.is_signed) negative_ = round_special(negative);
  ranges_shared_ = true;
  // A value below 2^(emin - m - 1), half the smallest subnormal (exponent
  // at most emin - m - 2), keeps nothing: round_below truncates it to code
  // 0 with a tail below half, whatever its significand, and it is tiny
  // under either tininess rule. Its result is round_below's for any such
  // value of its sign. Stochastic rounding with k random bits adds the top
  // k bits of the discarded part to the draw: below 2^(emin - m - k) those
  // are all zero, no draw rounds up, and the same holds.
  // sr-rne, sr-rna and sr-rno round the top k discarded bits to nearest
  // first: below 2^(emin - m - k - 1) they are below half and round to zero.
  const int k = policy_.random_bit_count;
  const bool stochastic = is_stochastic(policy_.rounding);
  if (stochastic && (k < 1 || k > 32)) return;  // no such draw: values are rounded one by one
  const int limit = min_exponent_ - format_.mantissa_bits - (stochastic ? k : 1) -
                    (rounds_fraction_to_nearest(policy_.rounding) ? 1 : 0);
  for (const bool sign : {false, true}) {
    Unpacked representative;
    representative.kind = Unpacked::Kind::finite;
    representative.sign = sign;
    representative.exponent = limit - 1;
    representative.significand = std::uint64_t{1} << 63;
    far_below_[sign] = round_below(representative, 0);
  }
  far_below_exponent_ = limit;
}

FMTCHECK_HD inline Conversion round_to_format(const Unpacked& x, const Encoding& f, const Policy& p) {
  return Rounder(f, p, Rounder::OneValue{})(x);
}

}  // namespace fmtcheck
