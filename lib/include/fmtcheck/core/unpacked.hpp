// The exact unpacked value every source is turned into before rounding.
#pragma once

#include <cstdint>

#include "fmtcheck/core/format.hpp"

namespace fmtcheck {

struct Unpacked {
  enum class Kind : std::uint8_t { zero, finite, inf, nan };
  Kind kind = Kind::zero;
  bool sign = false;
  // finite: |value| = significand * 2^(exponent - 63), with bit 63 of the
  // significand set, so the value lies in [2^exponent, 2^(exponent+1)).
  std::int32_t exponent = 0;
  std::uint64_t significand = 0;
  // finite: the true value has nonzero bits below the significand. 64 bits
  // plus sticky round correctly to any format of at most 62 bits' precision.
  bool sticky = false;
  // NaN: the source mantissa left-aligned (its quiet bit at bit 63).
  bool signaling = false;
  // finite: the value was a subnormal of its source format (for daz).
  bool source_subnormal = false;

  [[nodiscard]] bool is_nan() const { return kind == Kind::nan; }
  [[nodiscard]] bool is_inf() const { return kind == Kind::inf; }
  [[nodiscard]] bool is_zero() const { return kind == Kind::zero; }
  [[nodiscard]] bool is_finite_nonzero() const { return kind == Kind::finite; }
};

// Exact decoding of a format's container bits.
Unpacked unpack(const Format& f, std::uint64_t bits);
Unpacked unpack(float x);
Unpacked unpack(double x);

}  // namespace fmtcheck
