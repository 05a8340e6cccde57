#include "inputs.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <random>

namespace fmtcheck::reference {
namespace {

template <typename T>
using Bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;

template <typename T>
void add_with_neighbours(std::vector<T>& out, T x) {
  const T inf = std::numeric_limits<T>::infinity();
  for (T v : {x, std::nextafter(x, T(0)), std::nextafter(x, inf)}) {
    if (std::isfinite(v)) {
      out.push_back(v);
      out.push_back(-v);
    }
  }
}

// Appends x when the source type holds it exactly.
template <typename T>
void add_exact_with_neighbours(std::vector<T>& out, const Real& x) {
  const T t = x.template convert_to<T>();
  if (std::isfinite(t) && Real(t) == x) add_with_neighbours(out, t);
}

int exponent_of(const Real& x) {
  return std::ilogb(x.template convert_to<double>());
}

}  // namespace

template <typename T>
std::vector<T> special_inputs() {
  std::vector<T> out = {T(0), -T(0), std::numeric_limits<T>::infinity(), -std::numeric_limits<T>::infinity()};
  if constexpr (sizeof(T) == 4) {
    for (std::uint32_t b : {0x7FC00000u, 0xFFC00000u, 0x7FFFFFFFu, 0xFFFFFFFFu, 0x7F800001u, 0xFF800001u, 0x7FA00000u,
                            0x7FD55555u, 0xFFAAAAAAu, 0x7FBFFFFFu}) {
      out.push_back(std::bit_cast<float>(b));
    }
  } else {
    for (std::uint64_t b : {0x7FF8000000000000u, 0xFFF8000000000000u, 0x7FFFFFFFFFFFFFFFu, 0x7FF0000000000001u,
                            0xFFF0000000000001u, 0x7FF4000000000000u, 0x7FFDEADBEEF00000u, 0xFFF5555555555555u}) {
      out.push_back(std::bit_cast<double>(b));
    }
  }
  return out;
}

template <typename T>
std::vector<T> boundary_inputs(const ReferenceFormat& f) {
  using L = std::numeric_limits<T>;
  std::vector<T> out;
  for (const Value& v : f.ladder()) add_exact_with_neighbours(out, v.magnitude);
  for (const Real& mid : f.midpoints()) add_exact_with_neighbours(out, mid);
  for (int k = L::min_exponent - L::digits; k < L::max_exponent; ++k) add_with_neighbours(out, std::ldexp(T(1), k));
  for (T x : {L::max(), L::min(), L::denorm_min()}) add_with_neighbours(out, x);
  // Quarters of the smallest positive value: below half of it, and between.
  const Real smallest = f.ladder()[f.ladder()[0].magnitude == 0 ? 1 : 0].magnitude;
  for (int q = 1; q < 4; ++q) add_exact_with_neighbours(out, ldexp(smallest * q, -2));
  // Sort by bits, so that x and -x both survive deduplication.
  std::sort(out.begin(), out.end(), [](T a, T b) { return std::bit_cast<Bits<T>>(a) < std::bit_cast<Bits<T>>(b); });
  out.erase(std::unique(out.begin(), out.end(),
                        [](T a, T b) { return std::bit_cast<Bits<T>>(a) == std::bit_cast<Bits<T>>(b); }),
            out.end());
  return out;
}

template <typename T>
std::vector<T> random_inputs(const ReferenceFormat& f, std::size_t count, std::uint64_t seed) {
  using L = std::numeric_limits<T>;
  std::mt19937_64 rng(seed);
  const auto& ladder = f.ladder();
  const int low = std::max(exponent_of(ladder[ladder[0].magnitude == 0 ? 1 : 0].magnitude) - 4,
                           L::min_exponent - L::digits);
  const int high = std::min(exponent_of(ladder.back().magnitude) + 4, L::max_exponent - 1);
  const int p = L::digits - 1;  // stored mantissa bits of the source
  std::vector<T> out;
  out.reserve(count);
  while (out.size() < count) {
    const std::uint64_t r = rng();
    const bool negative = (r & 1) != 0;
    T x = 0;
    switch ((r >> 1) & 3) {
      case 0:  // any bit pattern
        x = std::bit_cast<T>(static_cast<Bits<T>>(rng()));
        out.push_back(x);
        continue;
      case 1:
      case 2: {  // log-uniform: random binade, random mantissa
        const int k = low + static_cast<int>(rng() % static_cast<std::uint64_t>(high - low + 1));
        const std::uint64_t mantissa = (std::uint64_t{1} << p) | (rng() & ((std::uint64_t{1} << p) - 1));
        x = std::ldexp(static_cast<T>(mantissa), k - p);
        break;
      }
      default: {  // a few source ulps from a ladder value or a midpoint
        const std::size_t i = rng() % ladder.size();
        const bool mid = i + 1 < ladder.size() && ((r >> 3) & 1) != 0;
        x = (mid ? f.midpoints()[i] : ladder[i].magnitude).template convert_to<T>();
        const int steps = static_cast<int>((r >> 4) % 7) - 3;
        for (int s = 0; s < std::abs(steps); ++s) x = std::nextafter(x, steps < 0 ? T(0) : L::infinity());
        break;
      }
    }
    out.push_back(negative ? -x : x);
  }
  return out;
}

template <typename T>
std::vector<T> every_nth(const std::vector<T>& all, std::size_t stride) {
  std::vector<T> out;
  for (std::size_t i = 0; i < all.size(); i += stride) out.push_back(all[i]);
  return out;
}

template std::vector<float> boundary_inputs<float>(const ReferenceFormat&);
template std::vector<double> boundary_inputs<double>(const ReferenceFormat&);
template std::vector<float> random_inputs<float>(const ReferenceFormat&, std::size_t, std::uint64_t);
template std::vector<double> random_inputs<double>(const ReferenceFormat&, std::size_t, std::uint64_t);
template std::vector<float> special_inputs<float>();
template std::vector<double> special_inputs<double>();
template std::vector<float> every_nth<float>(const std::vector<float>&, std::size_t);
template std::vector<double> every_nth<double>(const std::vector<double>&, std::size_t);

}  // namespace fmtcheck::reference
