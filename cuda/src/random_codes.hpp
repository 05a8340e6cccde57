// Random codes of a format for test cases (mma tiles, GEMM operands), the
// same seed giving the same codes.
#pragma once

#include <cstdint>

#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/random.hpp"

namespace fmtcheck::cuda::detail {

// Draws from splitmix64(seed, position), position counting up.
class Draws {
 public:
  explicit Draws(std::uint64_t seed) : seed_(seed) {}
  std::uint64_t next() { return splitmix64(seed_, position_++); }
  std::uint64_t below(std::uint64_t n) { return next() % n; }

 private:
  std::uint64_t seed_, position_ = 0;
};

// A code of f: mostly normal values 2^-8 .. 2^4 with random fraction bits;
// 1 in 16 zero, 1 in 16 subnormal (where f has them).
std::uint64_t random_code(const Format& f, Draws& d);

}  // namespace fmtcheck::cuda::detail
