// Bits -> exact value.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/host_device.hpp"
#include "fmtcheck/core/unpacked.hpp"

namespace fmtcheck {

// Container bits in hex, zero-padded to the container width: "0x3c00".
std::string to_hex(const Format& f, std::uint64_t bits);

// The exact value of a code: every format fmtcheck knows has at most 53
// significant bits and an exponent inside double's range. A NaN becomes
// double's quiet NaN of its sign. The GPU's kernels call it too.
FMTCHECK_HD inline double to_double(const Encoding& f, std::uint64_t bits) {
  const Unpacked u = unpack(f, bits);
  double v = 0;
  if (u.is_nan()) {
    v = NAN;
  } else if (u.is_inf()) {
    v = INFINITY;
  } else if (u.is_finite_nonzero()) {
    v = ldexp(static_cast<double>(u.significand), u.exponent - 63);
  }
  return u.sign ? -v : v;
}
// The exact value in decimal, all digits ("0.000000059604644775390625"), or
// "inf", "-inf", "nan", "-nan".
std::string to_exact_decimal(const Unpacked& x);
std::string to_exact_decimal(const Format& f, std::uint64_t bits);
// The value as a power of two times an odd integer when that is shorter to
// read: "2^-24", "3*2^-9", "448".
std::string to_binary_notation(const Unpacked& x);

}  // namespace fmtcheck
