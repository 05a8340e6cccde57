// Dot products with the three built-in accumulations, and the matrix product
// over any DotKernel.
#include <boost/multiprecision/cpp_int.hpp>
#include <optional>
#include <stdexcept>

#include "arith/exact.hpp"
#include "fmtcheck/arith/dot.hpp"

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

// Infinities and NaNs of a dot product by IEEE 754's rules for the exact sum
// of exact products, decided from the operands' classes alone (no finite
// product or partial sum can overflow here, whatever the input format): a NaN
// operand gives NaN (the first, in the order a[0], b[0], a[1], ...), 0 * inf
// and +inf + -inf are invalid, otherwise an infinite product is the result.
std::optional<Conversion> special_dot(std::span<const Unpacked> x, std::span<const Unpacked> y, const Format& out,
                                      const Policy& p, Flags flags) {
  std::vector<const Unpacked*> operands;
  bool zero_times_inf = false, plus_inf = false, minus_inf = false;
  for (std::size_t i = 0; i < x.size(); ++i) {
    operands.push_back(&x[i]);
    operands.push_back(&y[i]);
    if (x[i].is_nan() || y[i].is_nan()) continue;
    const bool inf = x[i].is_inf() || y[i].is_inf();
    zero_times_inf = zero_times_inf || (inf && (x[i].is_zero() || y[i].is_zero()));
    (x[i].sign != y[i].sign ? minus_inf : plus_inf) |= inf;
  }
  if (zero_times_inf) flags |= Flag::invalid;
  if (auto nan = arith::propagate_nan(operands, out, p)) return arith::with_flags(*nan, flags);
  if (zero_times_inf || (plus_inf && minus_inf)) return arith::with_flags(arith::invalid_operation(out, p), flags);
  if (plus_inf || minus_inf) return arith::round_with(arith::signed_infinity(minus_inf), out, p, flags);
  return std::nullopt;
}

// The exact sum of the products as an integer times 2^lowest, rounded once.
Conversion exact_dot(const Format& in, std::span<const std::uint64_t> a, std::span<const std::uint64_t> b,
                     const Format& out, const Policy& p) {
  using boost::multiprecision::cpp_int;
  Flags flags;
  std::vector<Unpacked> x, y;
  for (std::size_t i = 0; i < a.size(); ++i) {
    x.push_back(arith::screen(unpack(in, a[i]), p, flags));
    y.push_back(arith::screen(unpack(in, b[i]), p, flags));
  }
  if (auto special = special_dot(x, y, out, p, flags)) return *special;

  std::vector<arith::Term> terms;
  bool all_negative_zero = true;  // IEEE: a sum of -0 products is -0
  for (std::size_t i = 0; i < a.size(); ++i) {
    const bool zero_product = x[i].is_zero() || y[i].is_zero();
    all_negative_zero = all_negative_zero && zero_product && x[i].sign != y[i].sign;
    if (!zero_product) terms.push_back(arith::exact_product(x[i], y[i]));
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
