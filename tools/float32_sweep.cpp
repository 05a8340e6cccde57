#include "float32_sweep.hpp"

#include <bit>
#include <cstring>
#include <thread>
#include <vector>

#include "fmtcheck/convert.hpp"
#include "fmtcheck/random.hpp"

namespace fmtcheck::cli {
namespace {

static_assert(std::endian::native == std::endian::little, "sweep files are little-endian; this host is not");

template <typename Out>
void convert_range(std::uint64_t first, std::size_t count, const Format& to, const Policy& p, std::uint64_t seed,
                   std::uint8_t* out) {
  std::vector<float> in(count);
  for (std::size_t i = 0; i < count; ++i) in[i] = std::bit_cast<float>(static_cast<std::uint32_t>(first + i));
  std::vector<std::uint32_t> random;
  if (p.rounding == Rounding::sr) {
    random.resize(count);
    for (std::size_t i = 0; i < count; ++i) random[i] = static_cast<std::uint32_t>(splitmix64(seed, first + i));
  }
  std::vector<Out> results(count);
  convert_batch(in, to, p, std::span<Out>(results), random);
  std::memcpy(out, results.data(), count * sizeof(Out));
}

void convert_range_any(std::uint64_t first, std::size_t count, const Format& to, const Policy& p, std::uint64_t seed,
                       std::uint8_t* out) {
  switch (to.storage_bits) {
    case 8: return convert_range<std::uint8_t>(first, count, to, p, seed, out);
    case 16: return convert_range<std::uint16_t>(first, count, to, p, seed, out);
    case 32: return convert_range<std::uint32_t>(first, count, to, p, seed, out);
    default: return convert_range<std::uint64_t>(first, count, to, p, seed, out);
  }
}

}  // namespace

void sweep_float32(const Format& to, const Policy& p, std::uint64_t seed,
                   const std::function<void(std::uint64_t first, std::span<const std::uint8_t> bytes)>& consume) {
  const std::size_t width = static_cast<std::size_t>(to.storage_bits) / 8;
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::uint8_t> chunk(kSweepChunk * width);
  for (std::uint64_t first = 0; first < kFloat32Count; first += kSweepChunk) {
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) {
      const std::uint64_t begin = kSweepChunk * t / threads;
      const std::uint64_t end = kSweepChunk * (t + 1) / threads;
      pool.emplace_back([&, begin, end] {
        convert_range_any(first + begin, end - begin, to, p, seed, chunk.data() + begin * width);
      });
    }
    for (auto& th : pool) th.join();
    consume(first, chunk);
  }
}

}  // namespace fmtcheck::cli
