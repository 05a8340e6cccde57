// Every float32 input converted, summed up: the flag counts and an
// order-free digest of every (input, code) pair. Two implementations of a
// conversion (the CPU's and the GPU's: `fmtcheck sweep --digest`,
// cuda-emulator-sweep) give the same code for all 2^32 inputs when their
// digests and counts agree.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "fmtcheck/core/flags.hpp"
#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/policy.hpp"
#include "fmtcheck/core/random.hpp"

namespace fmtcheck {

struct Float32Sweep {
  FlagCounts flags;
  std::uint64_t digest = 0;
};

// One (input bits, code) pair's term of a digest: the digest is the sum of
// the terms mod 2^64, so any order and any split of the inputs give the
// same digest. (constexpr: the GPU's kernel sums the same terms.)
constexpr std::uint64_t sweep_digest_term(std::uint32_t input, std::uint64_t code) {
  return splitmix64(input, code);
}

// The float32 bit patterns first, first + 1, ... (one per element of `out`)
// converted into `to` under `p` by the batch conversion, input i drawing
// RandomStream{seed, first}.draw(i) as in a sweep; `scratch` holds the
// inputs (the caller keeps it, so chunk after chunk reuses its pages).
// Returns the flag counts. Code: std::uint8_t, uint16_t, uint32_t or uint64_t.
template <class Code>
FlagCounts convert_float32_patterns(std::uint64_t first, const Format& to, const Policy& p, std::uint64_t seed,
                                    std::span<Code> out, std::vector<float>& scratch);

// The CPU's batch conversion of every float32 bit pattern into `to` under
// `p` on `threads` threads (0: every core); a stochastic mode's input i
// draws RandomStream{seed}.draw(i), as a sweep does.
Float32Sweep sweep_every_float32(const Format& to, const Policy& p, std::uint64_t seed = 0, unsigned threads = 0);

}  // namespace fmtcheck
