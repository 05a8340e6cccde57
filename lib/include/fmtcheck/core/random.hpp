// Counter-based random bits for stochastic rounding: the draw for element i
// depends only on (seed, i), so results are reproducible in any order and on
// any number of threads.
#pragma once

#include <cstdint>

namespace fmtcheck {

// SplitMix64 (Steele, Lea & Flood 2014) evaluated at a position of its
// sequence: a full-avalanche mix of seed + (position + 1) * golden ratio.
// The constants are public so that a vector or GPU implementation draws the
// same bits.
namespace splitmix64_constants {
inline constexpr std::uint64_t gamma = 0x9E3779B97F4A7C15ull;  // 2^64 / golden ratio
inline constexpr std::uint64_t mix1 = 0xBF58476D1CE4E5B9ull;
inline constexpr std::uint64_t mix2 = 0x94D049BB133111EBull;
}  // namespace splitmix64_constants

constexpr std::uint64_t splitmix64(std::uint64_t seed, std::uint64_t position) {
  using namespace splitmix64_constants;
  std::uint64_t z = seed + (position + 1) * gamma;
  z = (z ^ (z >> 30)) * mix1;
  z = (z ^ (z >> 27)) * mix2;
  return z ^ (z >> 31);
}

}  // namespace fmtcheck

namespace fmtcheck {

// The draws of a batch under stochastic rounding: value i of the batch sits
// at position q = first + i of the stream and takes one half of
// splitmix64(seed, q / 2), the low 32 bits for even q and the high for odd,
// so one output of the generator serves two values. A tensor converted in
// pieces, in any order, on any number of threads, rounds as if in one piece.
struct RandomStream {
  std::uint64_t seed = 0;
  std::uint64_t first = 0;  // position of the batch's first value

  [[nodiscard]] constexpr std::uint32_t draw(std::uint64_t i) const {
    const std::uint64_t q = first + i;
    return static_cast<std::uint32_t>(splitmix64(seed, q >> 1) >> (32 * (q & 1)));
  }
};

}  // namespace fmtcheck
