// Comparison, minimum and maximum (IEEE 754 §5.11, §9.6 of 754-2019).
#include <tuple>

#include "arith/exact.hpp"

namespace fmtcheck {
namespace {

// Orders two non-NaN values; zeros of either sign are equal.
std::partial_ordering order(const Unpacked& a, const Unpacked& b) {
  const auto magnitude = [](const Unpacked& x) {
    // (class rank, exponent, significand): zero < finite < infinity.
    const int rank = x.is_zero() ? 0 : x.is_inf() ? 2 : 1;
    return std::tuple<int, std::int32_t, std::uint64_t>(rank, rank == 1 ? x.exponent : 0,
                                                       rank == 1 ? x.significand : 0);
  };
  if (a.is_zero() && b.is_zero()) return std::partial_ordering::equivalent;
  const bool a_negative = a.sign && !a.is_zero();
  const bool b_negative = b.sign && !b.is_zero();
  if (a_negative != b_negative) return a_negative ? std::partial_ordering::less : std::partial_ordering::greater;
  const auto by_magnitude = magnitude(a) <=> magnitude(b);
  return a_negative ? 0 <=> by_magnitude : std::partial_ordering(by_magnitude);
}

// The shared body of minimum and maximum: `want_less` picks the smaller.
Conversion pick(const Format& f, std::uint64_t a_bits, std::uint64_t b_bits, const Policy& p, bool want_less) {
  using namespace arith;
  Flags flags;
  const Unpacked a = screen(unpack(f, a_bits), p, flags);
  const Unpacked b = screen(unpack(f, b_bits), p, flags);
  if (auto nan = propagate_nan({&a, &b}, f, p)) return with_flags(*nan, flags);
  std::partial_ordering o = order(a, b);
  if (o == 0 && a.is_zero() && a.sign != b.sign) o = a.sign ? std::partial_ordering::less : std::partial_ordering::greater;
  const bool take_b = want_less ? o > 0 : o < 0;
  const Unpacked& chosen = take_b ? b : a;
  const std::uint64_t original = take_b ? b_bits : a_bits;
  // A flushed operand is delivered as the zero it was taken for.
  if (chosen.is_zero() && !unpack(f, original).is_zero()) return round_with(chosen, f, p, flags);
  return {original, flags};
}

}  // namespace

Comparison compare(const Format& f, std::uint64_t a_bits, std::uint64_t b_bits, const Policy& p, CompareKind kind) {
  using namespace arith;
  Comparison result;
  const Unpacked a = screen(unpack(f, a_bits), p, result.flags);
  const Unpacked b = screen(unpack(f, b_bits), p, result.flags);
  if (a.is_nan() || b.is_nan()) {
    const bool signaling = (a.is_nan() && a.signaling) || (b.is_nan() && b.signaling);
    if (signaling || kind == CompareKind::signaling) result.flags |= Flag::invalid;
    result.order = std::partial_ordering::unordered;
    return result;
  }
  result.order = order(a, b);
  return result;
}

Conversion minimum(const Format& f, std::uint64_t a, std::uint64_t b, const Policy& p) { return pick(f, a, b, p, true); }
Conversion maximum(const Format& f, std::uint64_t a, std::uint64_t b, const Policy& p) { return pick(f, a, b, p, false); }

}  // namespace fmtcheck
