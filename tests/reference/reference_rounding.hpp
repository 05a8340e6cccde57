// The reference conversion: an exact input, its neighbours on the format's
// ladder, and each policy axis applied as its definition reads. It shares no
// code with fmtcheck's round_to_format; only the result types (Conversion,
// Flags, Policy) are common vocabulary.
#pragma once

#include <cstdint>

#include "fmtcheck/core/policy.hpp"
#include "fmtcheck/core/round_to_format.hpp"
#include "reference_format.hpp"

namespace fmtcheck::reference {

// A source value as the reference sees it.
struct Input {
  enum class Kind : std::uint8_t { nan, inf, zero, finite };
  Kind kind = Kind::zero;
  bool negative = false;
  Real magnitude;                 // finite: |value|, exact
  bool source_subnormal = false;  // finite: subnormal in its source format (for daz)
  bool signaling = false;         // NaN: quiet bit clear
  std::uint64_t nan_mantissa = 0; // NaN: the source's mantissa field
  int nan_mantissa_bits = 0;      //      and its width (23 or 52)
};

Input from_float(float x);
Input from_double(double x);

// Where a finite magnitude lies on a format's ladder; it does not depend on
// the policy, so it is found once per input.
struct Position {
  std::size_t lower = 0;       // ladder index of the largest value <= |x|
  bool exact = false;          // |x| == ladder[lower]
  int versus_midpoint = 0;     // sign of |x| - midpoints[lower]
  bool below_ladder = false;   // |x| < every value (formats without zero)
  bool beyond = false;         // |x| >= the first value past the largest finite one
};

Position locate(const ReferenceFormat& f, const Real& magnitude);

Conversion convert(const ReferenceFormat& f, const Input& x, const Position& at, const Policy& p);

}  // namespace fmtcheck::reference
