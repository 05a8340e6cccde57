// Whole tensors of codes decoded into float32, by a SIMD kernel for the
// presets (proven on every code) and a table or the scalar decode otherwise.
#pragma once

#include <cstdint>
#include <span>

#include "fmtcheck/core/format.hpp"

namespace fmtcheck {

// Whether decode_batch takes f: a container of at most 32 bits, and every
// value a float32 (at most 24 significant bits, nothing above float32's
// largest binade, nothing below its smallest subnormal, 2^-149).
bool float32_holds(const Format& f);

// Batch decoding into float32, for formats whose every value float32 holds
// exactly (all presets but fp64): out[i] = float(to_double(from, bits[i])),
// a NaN becoming float32's quiet NaN with its sign. The element width must
// equal from.storage_bits and out must be at least as long as bits; throws
// std::invalid_argument otherwise, or when float32 cannot hold the format.
void decode_batch(std::span<const std::uint8_t> bits, const Format& from, std::span<float> out);
void decode_batch(std::span<const std::uint16_t> bits, const Format& from, std::span<float> out);
void decode_batch(std::span<const std::uint32_t> bits, const Format& from, std::span<float> out);

}  // namespace fmtcheck
