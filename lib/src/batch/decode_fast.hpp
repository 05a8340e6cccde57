// The SIMD forms of decode_batch, for the encodings decoded without a
// table: fp16 (F16C's vcvtph2ps), bf16 (float32's top half), 8-bit formats
// by integer arithmetic on float32's fields, and float32 containers (tf32,
// fp32). Compiled for every x86-64 level and picked at run time by Highway.
// Each decodes the longest run of whole vectors from the start of in and
// returns its length; the caller decodes the rest. The result equals
// float(to_double(code)) bit for bit, NaNs included (tests/batch proves it
// on every code, on every target).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "fmtcheck/core/format.hpp"

namespace fmtcheck::detail {

// Returns 0 on CPUs without F16C: Highway's fp16 emulation on those targets
// is not proven, so the caller keeps its table there.
std::size_t decode_fp16_fast(const std::uint16_t* in, std::size_t n, float* out);
std::size_t decode_bf16_fast(const std::uint16_t* in, std::size_t n, float* out);

// An 8-bit encoding decoded by arithmetic on float32's fields: formats
// with subnormals whose every value, and whose lowest binade's spacing, is
// a float32 normal (every 8-bit preset but E8M0). small_float_decode
// derives it from the format, or gives none for a format it cannot serve.
struct SmallFloatDecode {
  std::uint32_t magnitude_mask = 0;  // the code without its sign bit
  std::uint32_t sign_bit = 0;        // 0 for an unsigned format
  std::uint32_t sign_shift = 0;      // moves the sign bit to float32's
  std::uint32_t mantissa_bits = 0;
  std::uint32_t normal_offset = 0;   // (127 - bias) << 23: rebiases a normal code moved into float32's fields
  float subnormal_scale = 0;         // 2^(min_exponent - mantissa_bits): a subnormal is its mantissa times this
  std::uint32_t inf_magnitude = ~0u; // the magnitude that is infinity (ieee, extended), or none
  std::uint32_t nan_above = ~0u;     // magnitudes above this are NaN (ieee, fn), or none
  bool negative_zero_is_nan = false; // fnuz: the code with only the sign bit set
};
std::optional<SmallFloatDecode> small_float_decode(const Format& f);
std::size_t decode_small_float_fast(const SmallFloatDecode& k, const std::uint8_t* in, std::size_t n, float* out);

// tf32 and fp32 containers (code_mask clears tf32's padding).
std::size_t decode_float32_fast(const std::uint32_t* in, std::size_t n, std::uint32_t code_mask, float* out);

// Whether decode_batch decodes f's codes without a per-format table, so
// that batches of any length are cheap: those the kernels above serve.
bool decodes_without_table(const Format& f);

}  // namespace fmtcheck::detail
