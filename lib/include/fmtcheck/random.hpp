// Counter-based random bits for stochastic rounding: the draw for element i
// depends only on (seed, i), so results are reproducible in any order and on
// any number of threads.
#pragma once

#include <cstdint>

namespace fmtcheck {

// SplitMix64 (Steele, Lea & Flood 2014) evaluated at a position of its
// sequence: a full-avalanche mix of seed + (position + 1) * golden ratio.
constexpr std::uint64_t splitmix64(std::uint64_t seed, std::uint64_t position) {
  std::uint64_t z = seed + (position + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace fmtcheck
