// Converts every float32 bit pattern, in order, on all cores: the engine
// behind `sweep` (which writes the results or their digest) and `verify`
// (which compares them).
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "fmtcheck/batch/float32_sweep.hpp"
#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/policy.hpp"
#include "common/options.hpp"

namespace fmtcheck::cli {

inline constexpr std::uint64_t kFloat32Count = std::uint64_t{1} << 32;
inline constexpr std::uint64_t kSweepChunk = std::uint64_t{1} << 24;

// Calls consume(first_input, bytes) for consecutive chunks of kSweepChunk
// inputs; bytes holds the little-endian container of each result
// (to.storage_bits / 8 bytes per input). With --round sr the random draw of
// input i is RandomStream{seed}.draw(i) (random.hpp). On Device::cuda the
// GPU converts (a format of at most 32 bits), the same bits.
void sweep_float32(const Format& to, const Policy& p, std::uint64_t seed, Device device,
                   const std::function<void(std::uint64_t first, std::span<const std::uint8_t> bytes)>& consume);

// Every float32 input summed up in a digest and the flag counts
// (batch/float32_sweep.hpp), by every core or (Device::cuda) the GPU.
Float32Sweep digest_float32(const Format& to, const Policy& p, std::uint64_t seed, Device device);

}  // namespace fmtcheck::cli
