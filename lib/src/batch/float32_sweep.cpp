#include "fmtcheck/batch/float32_sweep.hpp"

#include <bit>
#include <span>
#include <vector>

#include "core/parallel.hpp"
#include "fmtcheck/batch/convert_batch.hpp"

namespace fmtcheck {

template <class Code>
FlagCounts convert_float32_patterns(std::uint64_t first, const Format& to, const Policy& p, std::uint64_t seed,
                                    std::span<Code> out, std::vector<float>& scratch) {
  scratch.resize(out.size());
  for (std::size_t i = 0; i < out.size(); ++i) scratch[i] = std::bit_cast<float>(static_cast<std::uint32_t>(first + i));
  return convert_batch(scratch, to, p, out, RandomStream{seed, first});
}
template FlagCounts convert_float32_patterns(std::uint64_t, const Format&, const Policy&, std::uint64_t,
                                             std::span<std::uint8_t>, std::vector<float>&);
template FlagCounts convert_float32_patterns(std::uint64_t, const Format&, const Policy&, std::uint64_t,
                                             std::span<std::uint16_t>, std::vector<float>&);
template FlagCounts convert_float32_patterns(std::uint64_t, const Format&, const Policy&, std::uint64_t,
                                             std::span<std::uint32_t>, std::vector<float>&);
template FlagCounts convert_float32_patterns(std::uint64_t, const Format&, const Policy&, std::uint64_t,
                                             std::span<std::uint64_t>, std::vector<float>&);

namespace {

constexpr std::uint64_t kCount = std::uint64_t{1} << 32;
constexpr std::size_t kChunk = std::size_t{1} << 22;

// A thread's buffers, kept from chunk to chunk (allocating per chunk would
// spend the time on page faults).
template <class Code>
struct Buffers {
  std::vector<float> in;
  std::vector<Code> out;
};
template <class Code>
thread_local Buffers<Code> buffers;

// The 2^32 inputs in chunks on the library's threads, each chunk summed
// apart: the digest is a sum, so any order gives the same.
template <class Code>
Float32Sweep sweep(const Format& to, const Policy& p, std::uint64_t seed, unsigned threads) {
  std::vector<Float32Sweep> sums(kCount / kChunk);
  detail::run_parallel(sums.size(), threads, [&](std::uint64_t c) {
    Buffers<Code>& b = buffers<Code>;
    b.out.resize(kChunk);
    const std::uint64_t first = c * kChunk;
    sums[c].flags = convert_float32_patterns(first, to, p, seed, std::span<Code>(b.out), b.in);
    for (std::size_t i = 0; i < kChunk; ++i) {
      sums[c].digest += sweep_digest_term(static_cast<std::uint32_t>(first + i), b.out[i]);
    }
  });
  buffers<Code> = {};  // the calling thread's; the other threads' went with them
  Float32Sweep total;
  for (const Float32Sweep& s : sums) {
    total.flags += s.flags;
    total.digest += s.digest;
  }
  return total;
}

}  // namespace

Float32Sweep sweep_every_float32(const Format& to, const Policy& p, std::uint64_t seed, unsigned threads) {
  switch (to.storage_bits) {
    case 8: return sweep<std::uint8_t>(to, p, seed, threads);
    case 16: return sweep<std::uint16_t>(to, p, seed, threads);
    case 32: return sweep<std::uint32_t>(to, p, seed, threads);
    default: return sweep<std::uint64_t>(to, p, seed, threads);
  }
}

}  // namespace fmtcheck
