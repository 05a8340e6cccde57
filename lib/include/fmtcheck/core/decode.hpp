// Bits -> exact value.
#pragma once

#include <cstdint>
#include <string>

#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/unpacked.hpp"

namespace fmtcheck {

// Container bits in hex, zero-padded to the container width: "0x3c00".
std::string to_hex(const Format& f, std::uint64_t bits);

// Every format fmtcheck knows fits in double, so this is exact (NaN keeps its sign).
double to_double(const Format& f, std::uint64_t bits);
// The exact value in decimal, all digits ("0.000000059604644775390625"), or
// "inf", "-inf", "nan", "-nan".
std::string to_exact_decimal(const Unpacked& x);
std::string to_exact_decimal(const Format& f, std::uint64_t bits);
// The value as a power of two times an odd integer when that is shorter to
// read: "2^-24", "3*2^-9", "448".
std::string to_binary_notation(const Unpacked& x);

}  // namespace fmtcheck
