// Flags that follow from an oracle's result by their definitions alone, so
// fmtcheck's flags are checked against the oracle rather than restated from
// fmtcheck's own code. The oracle's result is widened back to float32 by the
// oracle's own decoder; "overflowed" comes from the oracle too (the CPU's
// overflow flag, or the non-saturating conversion's infinity/NaN).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

#include "fmtcheck/core/flags.hpp"

namespace fmtcheck::oracle {

struct Outcome {
  float input = 0;
  float result = 0;         // the oracle's result, widened to float32 (exact)
  double min_normal = 0;    // smallest normal magnitude of the target format
  bool overflowed = false;  // rounding with unbounded exponent exceeded the largest finite value
};

inline bool is_signaling_nan(float x) {
  return std::isnan(x) && (std::bit_cast<std::uint32_t>(x) & 0x00400000u) == 0;
}

// The ML events: saturated, tiny_to_zero, subnormal, nan_produced.
inline Flags event_flags(const Outcome& o) {
  Flags f;
  const bool finite_in = std::isfinite(o.input);
  if ((o.overflowed || std::isinf(o.input)) && std::isfinite(o.result)) f |= Flag::saturated;
  if (finite_in && o.input != 0 && o.result == 0) f |= Flag::tiny_to_zero;
  if (o.result != 0 && std::fabs(o.result) < o.min_normal) f |= Flag::subnormal;
  if (std::isnan(o.result) && !std::isnan(o.input)) f |= Flag::nan_produced;
  return f;
}

// The IEEE flags except underflow (whose after-rounding tininess the result
// alone does not tell): inexact, overflow, invalid.
inline Flags ieee_flags_except_underflow(const Outcome& o) {
  Flags f;
  // NaN compares unequal, so an overflow to NaN counts as inexact too.
  if (std::isfinite(o.input) && !(o.result == o.input)) f |= Flag::inexact;
  if (o.overflowed) f |= Flag::overflow;
  if (is_signaling_nan(o.input) || (std::isinf(o.input) && std::isnan(o.result))) f |= Flag::invalid;
  return f;
}

inline constexpr Flags without_underflow(Flags f) {
  return Flags(static_cast<std::uint16_t>(f.bits() & ~(1u << static_cast<unsigned>(Flag::underflow))));
}

}  // namespace fmtcheck::oracle
