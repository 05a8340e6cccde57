#include "fmtcheck/batch/float32_sweep.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <span>
#include <thread>
#include <vector>

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

// One thread's buffers, kept for the whole sweep (allocating per chunk
// would spend the time on page faults).
template <class Code>
struct Worker {
  std::vector<float> in = std::vector<float>(kChunk);
  std::vector<Code> out = std::vector<Code>(kChunk);
  Float32Sweep sum;

  void chunk(const Format& to, const Policy& p, std::uint64_t seed, std::uint64_t first) {
    sum.flags += convert_float32_patterns(first, to, p, seed, std::span<Code>(out), in);
    for (std::size_t i = 0; i < kChunk; ++i) sum.digest += sweep_digest_term(static_cast<std::uint32_t>(first + i), out[i]);
  }
};

// Chunks of the 2^32 inputs taken by the threads in turn.
template <class Code>
Float32Sweep sweep(const Format& to, const Policy& p, std::uint64_t seed, unsigned threads) {
  std::atomic<std::uint64_t> next{0};
  std::vector<Worker<Code>> workers(threads);
  std::vector<std::thread> pool;
  for (Worker<Code>& w : workers) {
    pool.emplace_back([&] {
      for (std::uint64_t first; (first = next.fetch_add(kChunk)) < kCount;) w.chunk(to, p, seed, first);
    });
  }
  for (std::thread& t : pool) t.join();
  Float32Sweep total;
  for (const Worker<Code>& w : workers) {
    total.flags += w.sum.flags;
    total.digest += w.sum.digest;
  }
  return total;
}

}  // namespace

Float32Sweep sweep_every_float32(const Format& to, const Policy& p, std::uint64_t seed, unsigned threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  switch (to.storage_bits) {
    case 8: return sweep<std::uint8_t>(to, p, seed, threads);
    case 16: return sweep<std::uint16_t>(to, p, seed, threads);
    case 32: return sweep<std::uint32_t>(to, p, seed, threads);
    default: return sweep<std::uint64_t>(to, p, seed, threads);
  }
}

}  // namespace fmtcheck
