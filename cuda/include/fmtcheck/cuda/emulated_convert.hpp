// fmtcheck's own conversion on the GPU: the library's rounding core
// (fmtcheck/core/round_to_format.hpp, the CPU's code compiled for the
// device) over float32 buffers, with the flag counts. Not the GPU's cvt
// instructions (convert.hpp): every format and policy fmtcheck knows, the
// same bits as the CPU's fmtcheck::convert.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "fmtcheck/batch/float32_sweep.hpp"
#include "fmtcheck/core/flags.hpp"
#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/policy.hpp"
#include "fmtcheck/core/random.hpp"

namespace fmtcheck::cuda {

// The formats the GPU converts into: containers of 8, 16 or 32 bits (every
// format but fp64). Throws std::invalid_argument naming the format otherwise.
void check_gpu_target(const Format& to);

// Converts n float32 values at device address `in` into codes of `to` at
// device address `out` (one container of to.storage_bits each) under `p`,
// on the current device. Stochastic rounding takes value i's random bits
// from RandomStream{seed, first}.draw(i), as the CPU's batch conversion
// does, so the same seed gives the same bits. Returns the flag counts.
// Throws std::invalid_argument for a target the GPU does not take,
// std::runtime_error on CUDA errors (no GPU among them).
FlagCounts convert_device_buffer(const float* in, std::size_t n, const Format& to, const Policy& p, void* out,
                                 std::uint64_t seed = 0, std::uint64_t first = 0);

// The same for host values, through device buffers: the codes widened to
// 32 bits, and the counts.
struct GpuConverted {
  std::vector<std::uint32_t> codes;
  FlagCounts flags;
};
GpuConverted convert_on_gpu(std::span<const float> in, const Format& to, const Policy& p, std::uint64_t seed = 0);

// Whether the GPU decodes codes of `from` into float32 (every value of the
// format is a float32: float32_holds) or else float64. Throws
// std::invalid_argument for containers wider than 32 bits.
bool decodes_to_float32(const Format& from);

// Decodes n codes of `from` (containers of from.storage_bits at device
// address `in`) into their exact values at device address `out`, float32 or
// float64 as decodes_to_float32 says, on the current device: the CPU's
// decode (decode_batch, to_double), a NaN becoming the quiet NaN of its sign.
void decode_device_buffer(const void* in, std::size_t n, const Format& from, void* out);

// The same for host codes, through device buffers: float32 or float64 filled.
struct GpuDecoded {
  std::vector<float> float32;
  std::vector<double> float64;
};
GpuDecoded decode_on_gpu(std::span<const std::uint32_t> codes, const Format& from);

// The float32 bit patterns first, first + 1, ..., first + count - 1
// (first + count <= 2^32), generated on the device and converted as
// convert_device_buffer does (value i draws RandomStream{seed, first}.draw(i),
// as the CPU's sweep does); the codes are copied to host_out, to.storage_bits
// / 8 little-endian bytes each. `fmtcheck sweep|verify --device cuda` runs
// the 2^32 inputs through here chunk by chunk. Returns the flag counts.
FlagCounts convert_float32_patterns(std::uint64_t first, std::size_t count, const Format& to, const Policy& p,
                                    std::uint64_t seed, void* host_out);

// Every float32 input (2^32 bit patterns, generated on the device) converted
// into `to` under `p`, without writing the codes: the flag counts and the
// digest of every (input, code) pair, as the CPU's sweep_every_float32
// (batch/float32_sweep.hpp) sums them.
Float32Sweep sweep_every_float32_on_gpu(const Format& to, const Policy& p, std::uint64_t seed = 0);

}  // namespace fmtcheck::cuda
