#include "fmtcheck/batch/convert_parallel.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/parallel.hpp"
#include "fmtcheck/batch/convert_batch.hpp"
#include "fmtcheck/batch/decode_batch.hpp"
#include "fmtcheck/core/convert.hpp"
#include "fmtcheck/core/random.hpp"

namespace fmtcheck {
namespace {

// Large enough that a thread's start and the flag merge cost nothing beside
// the conversion, small enough that every core gets several.
constexpr std::size_t chunk = std::size_t{1} << 18;

template <typename T>
FlagCounts convert_chunk(std::span<const float> x, std::uint64_t first, const Format& to, const Policy& p, std::span<T> out,
                         std::uint64_t seed) {
  if (is_stochastic(p.rounding)) return convert_batch(x, to, p, out, RandomStream{seed, first});
  return convert_batch(x, to, p, out);
}

template <typename T>
FlagCounts convert_chunk(std::span<const double> x, std::uint64_t first, const Format& to, const Policy& p,
                         std::span<T> out, std::uint64_t seed) {
  FlagCounts counts;
  Policy each = p;
  const RandomStream draws{seed, first};
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (is_stochastic(p.rounding)) each.random_bits = draws.draw(i);  // the core uses the low random_bit_count bits
    const Conversion c = convert(x[i], to, each);
    out[i] = static_cast<T>(c.bits);
    counts.add(c.flags);
  }
  return counts;
}

// Codes decoded into a per-thread float32 buffer, then converted as float32.
template <typename T, typename Code>
FlagCounts convert_chunk(std::span<const Code> codes, const Format& from, std::uint64_t first, const Format& to,
                         const Policy& p, std::span<T> out, std::uint64_t seed) {
  thread_local std::vector<float> values;
  values.resize(codes.size());
  decode_batch(codes, from, values);
  return convert_chunk(std::span<const float>(values), first, to, p, out, seed);
}

template <typename T>
FlagCounts convert_all(const BatchSource& in, const Format& to, const Policy& p, std::span<T> out, std::uint64_t seed,
                       unsigned threads) {
  const std::size_t n = in.size();
  if (out.size() < n) throw std::invalid_argument("output holds " + std::to_string(out.size()) + " values, input " + std::to_string(n));
  if (static_cast<int>(sizeof(T) * 8) != to.storage_bits) {
    throw std::invalid_argument(to.name + " is stored in " + std::to_string(to.storage_bits) + " bits, not " +
                                std::to_string(sizeof(T) * 8));
  }
  const std::uint64_t chunks = (n + chunk - 1) / chunk;
  std::vector<FlagCounts> counts(chunks);
  detail::run_parallel(chunks, threads, [&](std::uint64_t c) {
    const std::size_t first = c * chunk, size = std::min(chunk, n - first);
    const std::span<T> part = out.subspan(first, size);
    counts[c] = std::visit([&](auto values) {
      using V = typename decltype(values)::value_type;
      const auto x = values.subspan(first, size);
      if constexpr (std::is_same_v<V, float> || std::is_same_v<V, double>) {
        return convert_chunk(x, first, to, p, part, seed);
      } else {
        return convert_chunk(x, in.from, first, to, p, part, seed);
      }
    }, in.values);
  });
  FlagCounts total;
  for (const FlagCounts& c : counts) total += c;
  return total;
}

}  // namespace

FlagCounts convert_parallel(const BatchSource& in, const Format& to, const Policy& p, std::span<std::uint8_t> out,
                            std::uint64_t seed, unsigned threads) {
  return convert_all(in, to, p, out, seed, threads);
}
FlagCounts convert_parallel(const BatchSource& in, const Format& to, const Policy& p, std::span<std::uint16_t> out,
                            std::uint64_t seed, unsigned threads) {
  return convert_all(in, to, p, out, seed, threads);
}
FlagCounts convert_parallel(const BatchSource& in, const Format& to, const Policy& p, std::span<std::uint32_t> out,
                            std::uint64_t seed, unsigned threads) {
  return convert_all(in, to, p, out, seed, threads);
}
FlagCounts convert_parallel(const BatchSource& in, const Format& to, const Policy& p, std::span<std::uint64_t> out,
                            std::uint64_t seed, unsigned threads) {
  return convert_all(in, to, p, out, seed, threads);
}

void decode_parallel(const BatchSource& codes, std::span<float> out, unsigned threads) {
  const std::size_t n = codes.size();
  if (out.size() < n) throw std::invalid_argument("output holds " + std::to_string(out.size()) + " values, input " + std::to_string(n));
  const std::uint64_t chunks = (n + chunk - 1) / chunk;
  detail::run_parallel(chunks, threads, [&](std::uint64_t c) {
    const std::size_t first = c * chunk, size = std::min(chunk, n - first);
    std::visit([&](auto values) {
      using V = typename decltype(values)::value_type;
      if constexpr (std::is_same_v<V, float> || std::is_same_v<V, double>) {
        throw std::invalid_argument("decode takes codes, not float values");
      } else {
        decode_batch(values.subspan(first, size), codes.from, out.subspan(first, size));
      }
    }, codes.values);
  });
}

}  // namespace fmtcheck
