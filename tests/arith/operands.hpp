// Operands for the sampled fp16/bf16 proofs: random codes mixed with boundary
// codes. Case i's operands come from a counter-based hash of (seed, i), so a
// case is the same whichever thread checks it, and drawing costs a few
// multiplications rather than seeding a generator per case.
#pragma once

#include <cstdint>
#include <vector>

#include "fmtcheck/core/format.hpp"

namespace fmtcheck::testing {

// Boundary magnitudes of a 16-bit IEEE-like format, both signs: zeros, the
// smallest and largest subnormals and normals, max, infinities, NaNs (quiet
// and signaling), values near 1 and near the overflow threshold.
inline std::vector<std::uint64_t> boundary_codes(const Format& f) {
  const std::uint64_t m = std::uint64_t{1} << f.mantissa_bits;
  const std::uint64_t inf = f.infinity_code();
  const std::uint64_t one = static_cast<std::uint64_t>(f.bias) << f.mantissa_bits;
  std::vector<std::uint64_t> mags = {0, 1, 2, m - 1, m, m + 1, inf - 1, inf - 2, inf, inf + 1, inf | (m >> 1),
                                     one, one + 1, one - 1, inf - m, inf - m - 1};
  std::vector<std::uint64_t> out;
  for (auto c : mags) {
    out.push_back(c);
    out.push_back(c | f.sign_bit());
  }
  return out;
}

// SplitMix64's finaliser: consecutive inputs give independent-looking outputs.
inline std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EB;
  return x ^ (x >> 31);
}

class Operands {
 public:
  explicit Operands(const Format& f) : boundary_(boundary_codes(f)) {}
  // Operand k (0, 1, 2) of case i: a boundary code a third of the time, else
  // a uniformly random 16-bit code.
  [[nodiscard]] std::uint64_t pick(std::uint64_t seed, std::uint64_t i, int k) const {
    const std::uint64_t r = mix((seed << 40) ^ (i << 2) ^ static_cast<std::uint64_t>(k));
    return (r % 3 == 0) ? boundary_[(r >> 8) % boundary_.size()] : (r >> 16) & 0xFFFF;
  }

 private:
  std::vector<std::uint64_t> boundary_;
};

}  // namespace fmtcheck::testing
