// The one round-and-pack routine (after SoftFloat's roundPack): an exact
// unpacked value becomes the code of the target format plus its flags. The
// common case, a value inside the format's binades, is inline in the header
// (Rounder::round_inside); everything else is here.
//
// Every mode chooses between the truncated code c and c + 1 (see the
// header), and "even"/"odd" is the parity of the code, which also covers
// formats without mantissa bits, such as E8M0.
#include "fmtcheck/round_to_format.hpp"

#include "fmtcheck/nan_rules.hpp"

namespace fmtcheck {
namespace {

using detail::classify_tail;
using detail::split;
using detail::Tail;
using detail::Truncated;

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
    case Rounding::sr: break;
  }
  return false;
}

constexpr std::uint16_t table_of(Rounding mode) {
  std::uint16_t bits = 0;
  for (unsigned i = 0; i < 16; ++i) {
    const bool away = deterministic_away(mode, static_cast<Tail>(i & 3), (i & 8) != 0, (i & 4) != 0);
    bits = static_cast<std::uint16_t>(bits | (unsigned{away} << i));
  }
  return bits;
}

// Computed at compile time: round_to_format builds a Rounder per value.
constexpr std::uint16_t kAwayBits[] = {table_of(Rounding::rne), table_of(Rounding::rna), table_of(Rounding::rtz),
                                       table_of(Rounding::rup), table_of(Rounding::rdn), table_of(Rounding::rto),
                                       0};
static_assert(static_cast<int>(Rounding::sr) == 6, "kAwayBits lists the modes in their order, sr last");


// A shift of 64 or more: the whole significand is discarded (values far
// below the format's smallest subnormal).
Truncated truncate_all(std::uint64_t sig, bool sticky, std::int64_t shift, int sr_bits) {
  Truncated t;
  if (shift == 64) {
    // Drop the significand's last bit into the sticky bit: the same tail
    // against half = 2^63 as against 2^62 one bit lower.
    t.tail = classify_tail(((sig >> 1) << 1) | std::uint64_t{sticky || (sig & 1) != 0}, std::uint64_t{1} << 63);
    if (sr_bits > 0) t.sr_top = sig >> (64 - sr_bits);
    return t;
  }
  t.tail = (sig != 0 || sticky) ? Tail::below_half : Tail::exact;
  if (sr_bits > 0 && shift - sr_bits < 64) t.sr_top = sig >> (shift - sr_bits);
  return t;
}

// The same for any shift >= 1.
Truncated truncate(std::uint64_t sig, bool sticky, std::int64_t shift, int sr_bits) {
  if (shift >= 64) [[unlikely]] return truncate_all(sig, sticky, shift, sr_bits);
  return split(sig, sticky, shift, sr_bits);
}

// Whether r takes the upper neighbour c + 1 of a truncated value.
bool round_away(const Rounder& r, std::uint32_t random_bits, const Truncated& t, bool sign, bool code_odd) {
  return detail::round_away(r.away_bits(), r.sr_bits(), random_bits, t, sign, code_odd);
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
  return {r.signed_code(sign && f.has_negative_zero(), 0), flags};
}

// Overflow follows IEEE 754: directed modes that round toward zero give the
// largest finite value, the others infinity; a format without infinity gives
// NaN instead, and one without NaN too (MX FP6/FP4) always saturates.
[[gnu::noinline]] Conversion overflow_result(const Rounder& r, bool sign) {
  const Format& f = r.format();
  const Policy& p = r.policy();
  const Flags flags = Flags(Flag::overflow) | Flag::inexact;
  const Rounding mode = p.rounding;
  const bool toward_zero = mode == Rounding::rtz || mode == Rounding::rto ||
                           (mode == Rounding::rup && sign) || (mode == Rounding::rdn && !sign);
  if (p.overflow == Overflow::sat || toward_zero || f.specials == Specials::none) {
    return {r.signed_code(sign, r.max_finite_code()), flags | Flag::saturated};
  }
  if (f.has_inf()) return {r.signed_code(sign, f.infinity_code()), flags};
  return nan_result(r, sign, flags);
}

Conversion infinity_result(const Rounder& r, bool sign) {
  const Format& f = r.format();
  if (!f.is_signed && sign) return nan_result(r, sign, Flag::invalid);
  if (r.policy().overflow == Overflow::sat) return {r.signed_code(sign, r.max_finite_code()), Flag::saturated};
  if (f.has_inf()) return {r.signed_code(sign, f.infinity_code()), {}};
  if (f.specials == Specials::none) {
    return {r.signed_code(sign, r.max_finite_code()), Flags(Flag::saturated) | Flag::invalid};
  }
  return nan_result(r, sign, Flag::invalid);
}

// A value below the lowest binade (e < emin): subnormal codes, tininess,
// ftz.
Conversion round_below(const Rounder& r, const Unpacked& x, std::uint32_t random_bits) {
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
    const Truncated full = split(x.significand, x.sticky, 63 - m, r.sr_bits());
    const std::uint64_t top = (std::uint64_t{2} << m) - 1;
    if (full.kept == top && round_away(r, random_bits, full, x.sign, (top & 1) != 0)) tiny = false;
  }
  if (!f.has_subnormals) {
    // Nothing is representable below the lowest binade (E8M0 has no zero):
    // every mode gives the smallest value, and ftz has no zero to flush to.
    return {r.signed_code(x.sign, 0), tiny ? Flags(Flag::inexact) | Flag::underflow : Flags(Flag::inexact)};
  }

  const Truncated t = truncate(x.significand, x.sticky, 63 - m + (emin - e), r.sr_bits());
  std::uint64_t code = t.kept;
  if (round_away(r, random_bits, t, x.sign, (code & 1) != 0)) ++code;
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
  return {r.signed_code(x.sign, code), flags};
}

// Every input but a finite one the format can take.
Conversion round_special(const Rounder& r, const Unpacked& x) {
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

std::uint16_t detail::away_bits(Rounding mode) { return kAwayBits[static_cast<int>(mode)]; }

Conversion Rounder::special(const Unpacked& x) const { return round_special(*this, x); }

Conversion Rounder::below(const Unpacked& x, std::uint32_t random_bits) const {
  return round_below(*this, x, random_bits);
}

Conversion Rounder::overflow(bool sign) const {
  return shared_overflow_ ? overflow_[sign] : overflow_result(*this, sign);
}

void Rounder::share_ranges() {
  for (const bool sign : {false, true}) overflow_[sign] = overflow_result(*this, sign);
  shared_overflow_ = true;
  if (policy_->rounding == Rounding::sr) return;  // the draw decides per value
  // A value below 2^(emin - m - 1), half the smallest subnormal (exponent
  // at most emin - m - 2), keeps nothing: round_below truncates it to code
  // 0 with a tail below half, whatever its significand, and it is tiny
  // under either tininess rule. Its result is round_below's for any such
  // value of its sign.
  const int limit = min_exponent_ - format_->mantissa_bits - 1;
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
