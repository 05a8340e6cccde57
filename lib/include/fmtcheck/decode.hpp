// Bits -> exact value.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "fmtcheck/format.hpp"
#include "fmtcheck/unpacked.hpp"

namespace fmtcheck {

// Container bits in hex, zero-padded to the container width: "0x3c00".
std::string to_hex(const Format& f, std::uint64_t bits);

// Every format fmtcheck knows fits in double, so this is exact (NaN keeps its sign).
double to_double(const Format& f, std::uint64_t bits);
// Batch decoding into float32, for formats whose every value float32 holds
// exactly (all presets but fp64): out[i] = float(to_double(from, bits[i])),
// a NaN becoming float32's quiet NaN with its sign. The element width must
// equal from.storage_bits and out must be at least as long as bits; throws
// std::invalid_argument otherwise, or when float32 cannot hold the format.
void decode_batch(std::span<const std::uint8_t> bits, const Format& from, std::span<float> out);
void decode_batch(std::span<const std::uint16_t> bits, const Format& from, std::span<float> out);
void decode_batch(std::span<const std::uint32_t> bits, const Format& from, std::span<float> out);

// The exact value in decimal, all digits ("0.000000059604644775390625"), or
// "inf", "-inf", "nan", "-nan".
std::string to_exact_decimal(const Unpacked& x);
std::string to_exact_decimal(const Format& f, std::uint64_t bits);
// The value as a power of two times an odd integer when that is shorter to
// read: "2^-24", "3*2^-9", "448".
std::string to_binary_notation(const Unpacked& x);

}  // namespace fmtcheck
