// The SIMD forms of decode_batch for the encodings the CPU widens without
// a table: fp16 (F16C's vcvtph2ps), bf16 (float32's top half), and OCP
// E4M3 and E5M2 (through fp16). Compiled for every x86-64 level and picked
// at run time by Highway.
// Each decodes the longest run of whole vectors from the start of in and
// returns its length; the caller decodes the rest. The result equals
// float(to_double(code)) bit for bit, NaNs included (tests/speed proves it
// on every code).
#pragma once

#include <cstddef>
#include <cstdint>

#include "fmtcheck/format.hpp"

namespace fmtcheck::detail {

// Returns 0 on CPUs without F16C: Highway's fp16 emulation on those targets
// is not proven, so the caller keeps its table there.
std::size_t decode_fp16_fast(const std::uint16_t* in, std::size_t n, float* out);
std::size_t decode_bf16_fast(const std::uint16_t* in, std::size_t n, float* out);
// OCP E4M3 and E5M2 through fp16 (vcvtph2ps); 0 on CPUs without F16C too.
std::size_t decode_e4m3_fast(const std::uint8_t* in, std::size_t n, float* out);
std::size_t decode_e5m2_fast(const std::uint8_t* in, std::size_t n, float* out);

// Whether decode_batch takes f: a container of at most 32 bits, and every
// value a float32 (at most 24 significant bits, nothing above float32's
// largest binade, nothing below its smallest subnormal, 2^-149).
bool float32_holds(const Format& f);

// Whether decode_batch decodes f's codes without a per-format table, so
// that batches of any length are cheap: fp16, bf16, E4M3 and E5M2 through
// the kernels above, tf32 and fp32 as float32 bits.
bool decodes_without_table(const Format& f);

}  // namespace fmtcheck::detail
