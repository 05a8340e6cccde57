#include "fmtcheck/batch/elementwise.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/parallel.hpp"
#include "fmtcheck/arith/arithmetic.hpp"

namespace fmtcheck {
namespace {

constexpr std::size_t chunk = std::size_t{1} << 14;

Conversion apply(Operation op, const Format& f, std::uint64_t a, std::uint64_t b, std::uint64_t c, const Policy& p) {
  switch (op) {
    case Operation::add: return add(f, a, b, p);
    case Operation::sub: return sub(f, a, b, p);
    case Operation::mul: return mul(f, a, b, p);
    case Operation::div: return div(f, a, b, p);
    case Operation::fma: return fma(f, a, b, c, p);
    case Operation::sqrt: return sqrt(f, a, p);
    case Operation::minimum: return minimum(f, a, b, p);
    case Operation::maximum: return maximum(f, a, b, p);
  }
  return {};
}

}  // namespace

int operand_count(Operation op) {
  switch (op) {
    case Operation::sqrt: return 1;
    case Operation::fma: return 3;
    default: return 2;
  }
}

FlagCounts elementwise(Operation op, const Format& f, std::span<const std::uint64_t> a, std::span<const std::uint64_t> b,
                       std::span<const std::uint64_t> c, const Policy& p, std::span<std::uint64_t> out,
                       unsigned threads) {
  const int operands = operand_count(op);
  const std::size_t n = a.size();
  if ((operands >= 2 && b.size() != n) || (operands == 3 && c.size() != n) || out.size() != n) {
    throw std::invalid_argument("operands and output must have the same number of elements");
  }
  const std::uint64_t chunks = (n + chunk - 1) / chunk;
  std::vector<FlagCounts> counts(chunks);
  detail::run_parallel(chunks, threads, [&](std::uint64_t k) {
    const std::size_t first = k * chunk, last = std::min(n, first + chunk);
    for (std::size_t i = first; i < last; ++i) {
      const Conversion r = apply(op, f, a[i], operands >= 2 ? b[i] : 0, operands == 3 ? c[i] : 0, p);
      out[i] = r.bits;
      counts[k].add(r.flags);
    }
  });
  FlagCounts total;
  for (const FlagCounts& k : counts) total += k;
  return total;
}

}  // namespace fmtcheck
