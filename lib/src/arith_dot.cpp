// Dot products with the three built-in accumulations, and the matrix product
// over any DotKernel.
#include <boost/multiprecision/cpp_int.hpp>
#include <stdexcept>

#include "arith_exact.hpp"
#include "fmtcheck/dot.hpp"

namespace fmtcheck {
namespace {

Conversion element_dot(const Format& in, std::span<const std::uint64_t> a, std::span<const std::uint64_t> b,
                       const Format& out, const Policy& p) {
  Conversion sum = round_to_format(arith::signed_zero(false), in, p);
  for (std::size_t i = 0; i < a.size(); ++i) {
    const Conversion product = mul(in, a[i], b[i], p);
    const Conversion next = add(in, sum.bits, product.bits, p);
    sum = {next.bits, sum.flags | product.flags | next.flags};
  }
  return arith::with_flags(round_to_format(unpack(in, sum.bits), out, p), sum.flags);
}

Conversion fp32_dot(const Format& in, std::span<const std::uint64_t> a, std::span<const std::uint64_t> b,
                    const Format& out, const Policy& p) {
  Conversion sum;  // +0
  for (std::size_t i = 0; i < a.size(); ++i) {
    const Conversion next = fma(unpack(in, a[i]), unpack(in, b[i]), unpack(formats::fp32, sum.bits), formats::fp32, p);
    sum = {next.bits, sum.flags | next.flags};
  }
  return arith::with_flags(round_to_format(unpack(formats::fp32, sum.bits), out, p), sum.flags);
}

// The exact sum of the products as an integer times 2^lowest, rounded once.
// Infinities and NaNs follow IEEE: the same as an fp64 fma chain, which is
// exact for them (no finite product of formats up to fp32 overflows fp64).
Conversion exact_dot(const Format& in, std::span<const std::uint64_t> a, std::span<const std::uint64_t> b,
                     const Format& out, const Policy& p) {
  using boost::multiprecision::cpp_int;
  Conversion special;
  Flags special_flags;
  for (std::size_t i = 0; i < a.size(); ++i) {
    // Default policy: no saturation, so an infinity stays one.
    special = fma(unpack(in, a[i]), unpack(in, b[i]), unpack(formats::fp64, special.bits), formats::fp64);
    special_flags |= special.flags;
  }
  const Unpacked chained = unpack(formats::fp64, special.bits);
  if (chained.is_nan() || chained.is_inf()) {
    return arith::with_flags(round_to_format(chained, out, p),
                             special_flags.has(Flag::invalid) ? Flags(Flag::invalid) : Flags());
  }

  Flags flags;
  std::vector<arith::Term> terms;
  bool all_negative_zero = true;  // IEEE: a sum of -0 products is -0
  for (std::size_t i = 0; i < a.size(); ++i) {
    const Unpacked x = arith::screen(unpack(in, a[i]), p, flags);
    const Unpacked y = arith::screen(unpack(in, b[i]), p, flags);
    const bool zero_product = x.is_zero() || y.is_zero();
    all_negative_zero = all_negative_zero && zero_product && x.sign != y.sign;
    if (!zero_product) terms.push_back(arith::exact_product(x, y));
  }
  if (terms.empty()) return arith::round_with(arith::signed_zero(all_negative_zero && !a.empty()), out, p, flags);
  std::int32_t lowest = terms[0].exponent;
  for (const auto& t : terms) lowest = std::min(lowest, t.exponent);
  cpp_int total = 0;
  for (const auto& t : terms) {
    // |t| = significand * 2^(exponent - 127): shift onto the common grid 2^(lowest - 127).
    cpp_int magnitude = (cpp_int(static_cast<std::uint64_t>(t.significand >> 64)) << 64) |
                        cpp_int(static_cast<std::uint64_t>(t.significand));
    magnitude <<= (t.exponent - lowest);
    total += t.sign ? cpp_int(-magnitude) : magnitude;
  }
  if (total == 0) return arith::round_with(arith::signed_zero(p.rounding == Rounding::rdn), out, p, flags);
  Unpacked exact;
  exact.kind = Unpacked::Kind::finite;
  exact.sign = total < 0;
  const cpp_int magnitude = exact.sign ? cpp_int(-total) : total;
  const auto msb = static_cast<std::int32_t>(boost::multiprecision::msb(magnitude));
  exact.exponent = lowest - 127 + msb;
  if (msb >= 63) {
    const cpp_int top = magnitude >> (msb - 63);
    exact.significand = static_cast<std::uint64_t>(top);
    exact.sticky = (top << (msb - 63)) != magnitude;
  } else {
    exact.significand = static_cast<std::uint64_t>(magnitude) << (63 - msb);
  }
  return arith::round_with(exact, out, p, flags);
}

}  // namespace

DotKernel dot_kernel(Accumulation acc) {
  switch (acc) {
    case Accumulation::element: return element_dot;
    case Accumulation::fp32: return fp32_dot;
    case Accumulation::exact: return exact_dot;
  }
  throw std::invalid_argument("dot_kernel: unknown accumulation");
}

Conversion dot(const Format& in, std::span<const std::uint64_t> a, std::span<const std::uint64_t> b, const Format& out,
               Accumulation acc, const Policy& p) {
  if (a.size() != b.size()) throw std::invalid_argument("dot: operands of different lengths");
  return dot_kernel(acc)(in, a, b, out, p);
}

MatmulResult matmul(const Format& in, std::span<const std::uint64_t> a, std::span<const std::uint64_t> b,
                    std::size_t m, std::size_t k, std::size_t n, const Format& out, const DotKernel& kernel,
                    const Policy& p) {
  if (a.size() != m * k || b.size() != k * n) throw std::invalid_argument("matmul: operand sizes do not match m, k, n");
  MatmulResult r;
  r.c.resize(m * n);
  std::vector<std::uint64_t> column(k);
  for (std::size_t j = 0; j < n; ++j) {
    for (std::size_t x = 0; x < k; ++x) column[x] = b[x * n + j];
    for (std::size_t i = 0; i < m; ++i) {
      const Conversion c = kernel(in, a.subspan(i * k, k), column, out, p);
      r.c[i * n + j] = c.bits;
      r.flags.add(c.flags);
    }
  }
  return r;
}

}  // namespace fmtcheck
