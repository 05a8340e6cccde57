// The one round-and-pack routine (after SoftFloat's roundPack): an exact
// unpacked value becomes the code of the target format plus its flags.
//
// Rounding works on codes: the truncated magnitude code c and its upper
// neighbour c + 1 are adjacent values in every binade (carry into the
// exponent field is the next binade), so every mode is a choice between c and
// c + 1, and "even"/"odd" is the parity of the code (which also covers
// formats without mantissa bits, such as E8M0).
#include "fmtcheck/core/round_to_format.hpp"

#include "fmtcheck/core/nan_rules.hpp"

namespace fmtcheck {
namespace {

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
Tail classify_tail(std::uint64_t rem2, std::uint64_t half2) {
  return static_cast<Tail>(int{rem2 != 0} + int{rem2 >= half2} + int{rem2 > half2});
}

// Where the significand's low_bits lowest bits and the sticky bit lie
// relative to half a unit of the bit above them (low_bits <= 0: only the
// sticky bit lies below).
Tail rest_below(std::uint64_t sig, bool sticky, std::int64_t low_bits) {
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
Truncated truncate_all(std::uint64_t sig, bool sticky, std::int64_t shift, int sr_bits) {
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
Truncated split(std::uint64_t sig, bool sticky, std::int64_t shift, int sr_bits) {
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
Truncated truncate(std::uint64_t sig, bool sticky, std::int64_t shift, int sr_bits) {
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

// deterministic_away of each mode as a table of 16 bits, bit tail + 4 odd +
// 8 sign: a shift instead of an indirect jump, which the exhaustive tests,
// switching between policies, would mispredict.
constexpr std::uint16_t away_bits(Rounding mode) {
  std::uint16_t bits = 0;
  for (unsigned i = 0; i < 16; ++i) {
    const bool away = deterministic_away(mode, static_cast<Tail>(i & 3), (i & 8) != 0, (i & 4) != 0);
    bits = static_cast<std::uint16_t>(bits | (unsigned{away} << i));
  }
  return bits;
}
constexpr std::uint16_t kAwayBits[] = {away_bits(Rounding::rne), away_bits(Rounding::rna), away_bits(Rounding::rtz),
                                       away_bits(Rounding::rup), away_bits(Rounding::rdn), away_bits(Rounding::rto),
                                       0, 0, 0, 0};
static_assert(static_cast<int>(Rounding::sr) == 6 && static_cast<int>(Rounding::sr_rno) == 9,
              "kAwayBits lists the modes in their order, the stochastic ones last");

// Whether to take the upper neighbour c + 1 instead of the truncated code c.
bool round_away(const Policy& p, std::uint32_t random_bits, const Truncated& t, bool sign, bool code_odd) {
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
  return ((kAwayBits[static_cast<int>(p.rounding)] >> index) & 1u) != 0;
}

// A multiplication, not a conditional: random signs would mispredict a branch.
std::uint64_t signed_code(const Rounder& r, bool sign, std::uint64_t magnitude) {
  return r.format().to_storage((std::uint64_t{sign} * r.sign_bit()) | magnitude);
}

// A NaN made from a non-NaN input (infinity into E4M3, overflow without
// saturation, a negative value into an unsigned format).
Conversion nan_result(const Rounder& r, bool sign, Flags flags) {
  const Format& f = r.format();
  flags |= f.has_nan() ? Flags(Flag::nan_produced) : Flags(Flag::invalid);
  return {f.to_storage(created_nan_code(f, r.policy().nan, sign)), flags};
}

Conversion zero_result(const Rounder& r, bool sign, Flags flags) {
  const Format& f = r.format();
  if (!f.has_zero()) return nan_result(r, sign, flags | Flag::invalid);
  return {signed_code(r, sign && f.has_negative_zero(), 0), flags};
}

// Overflow of a finite value follows IEEE 754 under nosat: directed modes
// that round toward zero give the largest finite value, the others
// infinity; a format without infinity gives NaN instead, and one without
// NaN too (MX FP6/FP4) always saturates. sat and satprop give the largest
// finite value.
[[gnu::noinline]] Conversion overflow_result(const Rounder& r, bool sign) {
  const Format& f = r.format();
  const Policy& p = r.policy();
  const Flags flags = Flags(Flag::overflow) | Flag::inexact;
  const Rounding mode = p.rounding;
  const bool toward_zero = mode == Rounding::rtz || mode == Rounding::rto ||
                           (mode == Rounding::rup && sign) || (mode == Rounding::rdn && !sign);
  if (p.overflow != Overflow::nosat || toward_zero || f.specials == Specials::none) {
    return {signed_code(r, sign, r.max_finite_code()), flags | Flag::saturated};
  }
  if (f.has_inf()) return {signed_code(r, sign, f.infinity_code()), flags};
  return nan_result(r, sign, flags);
}

// An infinite input: +-max under sat; infinity (NaN in a format without
// infinity) under nosat and satprop, which saturates finite values only.
Conversion infinity_result(const Rounder& r, bool sign) {
  const Format& f = r.format();
  if (!f.is_signed && sign) return nan_result(r, sign, Flag::invalid);
  if (r.policy().overflow == Overflow::sat) return {signed_code(r, sign, r.max_finite_code()), Flag::saturated};
  if (f.has_inf()) return {signed_code(r, sign, f.infinity_code()), {}};
  if (f.specials == Specials::none) {
    return {signed_code(r, sign, r.max_finite_code()), Flags(Flag::saturated) | Flag::invalid};
  }
  return nan_result(r, sign, Flag::invalid);
}

// A value below the lowest binade (e < emin): subnormal codes, tininess,
// ftz. Out of the common path.
[[gnu::noinline]] Conversion round_below(const Rounder& r, const Unpacked& x, std::uint32_t random_bits) {
  const Format& f = r.format();
  const Policy& p = r.policy();
  const int m = f.mantissa_bits;
  const std::int64_t e = x.exponent;
  const std::int64_t emin = r.min_exponent();
  // Tininess: before rounding, the value is below 2^emin; after rounding, it
  // is still below 2^emin when rounded to full precision with unbounded
  // exponent range (only the top ulp of the binade below can reach 2^emin).
  bool tiny = true;
  if (p.tininess == Tininess::after && e == emin - 1) {
    const Truncated full = split(x.significand, x.sticky, 63 - m, p.random_bit_count);
    const std::uint64_t top = (std::uint64_t{2} << m) - 1;
    if (full.kept == top && round_away(p, random_bits, full, x.sign, (top & 1) != 0)) tiny = false;
  }
  if (!f.has_subnormals) {
    // Nothing is representable below the lowest binade (E8M0 has no zero):
    // every mode gives the smallest value, and ftz has no zero to flush to.
    return {signed_code(r, x.sign, 0), tiny ? Flags(Flag::inexact) | Flag::underflow : Flags(Flag::inexact)};
  }

  const Truncated t = truncate(x.significand, x.sticky, 63 - m + (emin - e), p.random_bit_count);
  std::uint64_t code = t.kept;
  if (round_away(p, random_bits, t, x.sign, (code & 1) != 0)) ++code;
  if (code > r.max_finite_code()) return overflow_result(r, x.sign);

  Flags flags;
  const bool inexact = t.tail != Tail::exact;
  if (inexact) flags |= Flag::inexact;

  if (tiny && inexact) flags |= Flag::underflow;

  if (tiny && p.flush_results()) {
    return zero_result(r, x.sign, flags | Flag::underflow | Flag::inexact | Flag::flushed | Flag::tiny_to_zero);
  }
  if (code == 0) return zero_result(r, x.sign, flags | Flag::tiny_to_zero);
  if (code < (std::uint64_t{1} << m)) flags |= Flag::subnormal;
  return {signed_code(r, x.sign, code), flags};
}

// Every input but a finite one the format can take: out of the common path,
// so that path keeps a small stack frame.
[[gnu::noinline]] Conversion round_special(const Rounder& r, const Unpacked& x) {
  const Format& f = r.format();
  switch (x.kind) {
    case Unpacked::Kind::nan: {
      // A NaN input is no new NaN; only a signaling one, or a format that
      // cannot hold NaN, makes the conversion invalid.
      const bool invalid = x.signaling || !f.has_nan();
      return {f.to_storage(nan_code(f, r.policy().nan, x.sign, x.significand)),
              invalid ? Flags(Flag::invalid) : Flags()};
    }
    case Unpacked::Kind::inf:
      return infinity_result(r, x.sign);
    case Unpacked::Kind::zero:
      return zero_result(r, x.sign, {});
    case Unpacked::Kind::finite:
      if (x.source_subnormal && r.policy().flush_inputs()) {
        // The input becomes zero; only a format with a zero gives a zero result.
        return zero_result(r, x.sign, f.has_zero() ? Flags(Flag::flushed) | Flag::tiny_to_zero : Flags(Flag::flushed));
      }
      return nan_result(r, x.sign, Flag::invalid);  // a negative value into an unsigned format
  }
  return {};
}

}  // namespace

// The common case, a value inside the format's binades (emin <= e <= emax),
// written without data-dependent branches from the precomputed facts alone:
// it is never tiny, never zero and never subnormal, so inexact is its only
// flag unless it overflows.
Conversion Rounder::round_inside(const Unpacked& x, std::uint32_t random_bits) const {
  const Truncated t = split(x.significand, x.sticky, shift_, policy_->random_bit_count);
  std::uint64_t code = (static_cast<std::uint64_t>(std::int64_t{x.exponent}) << (63 - shift_)) + t.kept + code_offset_;
  code += std::uint64_t{round_away(*policy_, random_bits, t, x.sign, (code & 1) != 0)};
  if (code > max_finite_code_) return overflow(x.sign);
  return {signed_code(*this, x.sign, code), Flags(static_cast<std::uint16_t>(std::uint16_t{t.tail != Tail::exact}
                                                                              << static_cast<unsigned>(Flag::inexact)))};
}

// Each case but the common one is a call out of this function, so that it
// saves no registers for them.
Conversion Rounder::operator()(const Unpacked& x, std::uint32_t random_bits) const {
  if (!takes_finite(x)) return round_special(*this, x);
  if (x.exponent < min_exponent_) {
    if (x.exponent < far_below_exponent_) return far_below_[x.sign];
    return round_below(*this, x, random_bits);
  }
  if (x.exponent > max_exponent_) return overflow(x.sign);
  return round_inside(x, random_bits);
}

// The results operator() gives whole binades without rounding: its shared
// ones, and round_special's for a negative value into an unsigned format.
const Conversion* Rounder::shared_result(const Unpacked& x) const {
  if (!takes_finite(x)) {
    // A finite value the format does not take is flushed by daz (zero) or,
    // failing that, a negative one into an unsigned format: one result.
    const bool refused_negative = x.kind == Unpacked::Kind::finite && !(x.source_subnormal && policy_->flush_inputs());
    return refused_negative && ranges_shared_ ? &negative_ : nullptr;
  }
  if (x.exponent < far_below_exponent_) return &far_below_[x.sign];
  if (x.exponent > max_exponent_ && ranges_shared_) return &overflow_[x.sign];
  return nullptr;
}

bool Rounder::shares_low_bits(const Unpacked& x, int free_bits) const {
  if (!takes_finite(x) || is_stochastic(policy_->rounding)) return false;
  if (x.exponent < min_exponent_ || x.exponent > max_exponent_) return false;
  if (free_bits < 0 || free_bits >= shift_) return false;  // the kept bits would vary too
  const std::uint64_t discarded = x.significand & ((std::uint64_t{1} << shift_) - 1);
  const std::uint64_t fixed = discarded >> free_bits;
  const std::uint64_t half = (std::uint64_t{1} << (shift_ - 1)) >> free_bits;
  return fixed != 0 && fixed != half;
}

Conversion Rounder::overflow(bool sign) const {
  return ranges_shared_ ? overflow_[sign] : overflow_result(*this, sign);
}

void Rounder::share_ranges() {
  for (const bool sign : {false, true}) overflow_[sign] = overflow_result(*this, sign);
  Unpacked negative;  // any negative value, into an unsigned format
  negative.kind = Unpacked::Kind::finite;
  negative.sign = true;
  negative.significand = std::uint64_t{1} << 63;
  if (!format_->is_signed) negative_ = round_special(*this, negative);
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
  const int k = policy_->random_bit_count;
  const bool stochastic = is_stochastic(policy_->rounding);
  if (stochastic && (k < 1 || k > 32)) return;  // no such draw: values are rounded one by one
  const int limit = min_exponent_ - format_->mantissa_bits - (stochastic ? k : 1) -
                    (rounds_fraction_to_nearest(policy_->rounding) ? 1 : 0);
  for (const bool sign : {false, true}) {
    Unpacked representative;
    representative.kind = Unpacked::Kind::finite;
    representative.sign = sign;
    representative.exponent = limit - 1;
    representative.significand = std::uint64_t{1} << 63;
    far_below_[sign] = round_below(*this, representative, 0);
  }
  far_below_exponent_ = limit;
}

Conversion round_to_format(const Unpacked& x, const Format& f, const Policy& p) {
  return Rounder(f, p, Rounder::OneValue{})(x);
}

}  // namespace fmtcheck
