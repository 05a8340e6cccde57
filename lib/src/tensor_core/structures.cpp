// The instruction structures other than one fused block (DotStructure in
// tensor_core.hpp): FP8 mma.sync through fp16 blocks on Hopper and
// Blackwell, and AMD's CDNA2 and CDNA3 matrix cores. docs/tensor-core.md
// gives the source of each and the data or hand-built cases that pin it.
#include <algorithm>
#include <bit>
#include <stdexcept>

#include "fmtcheck/core/convert.hpp"
#include "tensor_core/rounding.hpp"
#include "tensor_core/terms.hpp"

namespace fmtcheck::detail {
namespace {

// x * 2^-shift rounded toward minus infinity (shift may be negative: exact).
std::int64_t shift_down(std::int64_t x, int shift) {
  if (shift <= 0) return x * (std::int64_t{1} << -shift);
  if (shift >= 63) return x < 0 ? -1 : 0;
  return x >> shift;  // arithmetic: floor
}

// x * 2^-shift rounded toward zero.
std::int64_t shift_toward_zero(std::int64_t x, int shift) {
  if (shift <= 0) return x * (std::int64_t{1} << -shift);
  const std::int64_t m = shift >= 63 ? 0 : (x < 0 ? -x : x) >> shift;
  return x < 0 ? -m : m;
}

// fp32 bits with a subnormal value flushed to zero of its sign.
std::uint64_t flush(std::uint64_t bits) {
  const Unpacked u = unpack(formats::fp32, bits);
  if (u.is_finite_nonzero() && u.exponent < formats::fp32.min_exponent()) return bits & formats::fp32.sign_bit();
  return bits;
}

// A block's products summed without C: in units of 2^unit, aligned to the
// largest exponent e_max among its nonzero terms. `any` is false when every
// product is zero (the block then takes no part).
struct PartialSum {
  std::int64_t sum = 0;
  int unit = 0;
  int e_max = 0;
  bool any = false;
};

PartialSum block_sum(const std::vector<Term>& terms, std::size_t first, std::size_t step, int fraction_bits) {
  PartialSum s;
  std::vector<Term> live;
  for (std::size_t k = first; k < terms.size(); k += step) {
    if (terms[k].magnitude == 0) continue;
    s.e_max = s.any ? std::max(s.e_max, terms[k].align) : terms[k].align;
    s.any = true;
    live.push_back(terms[k]);
  }
  s.unit = s.e_max - fraction_bits;
  s.sum = sum_aligned<std::int64_t>(live, s.unit);
  return s;
}

// CDNA3 adds C with F + 7 = 31 bits below its exponent when C is the larger.
constexpr int late_c_extra_bits = 7;
// CDNA3 FP8: a C more than this many binades below e_max is truncated, not rounded down.
constexpr int odd_even_c_truncation_binades = 25;

}  // namespace

Conversion fp16_groups_instruction(const DotModel& model, const Format& input_a, const Format& input_b,
                                   std::span<const std::uint64_t> a, std::span<const std::uint64_t> b, std::uint64_t c,
                                   const Format& out) {
  // The operands become fp16 exactly (every FP8 value is one), so FP8
  // subnormals align as fp16 normals.
  std::vector<std::uint64_t> group_a[2], group_b[2];
  for (std::size_t k = 0; k < a.size(); ++k) {
    const std::size_t g = (k % 4) / 2;
    group_a[g].push_back(convert_bits(a[k], input_a, formats::fp16).bits);
    group_b[g].push_back(convert_bits(b[k], input_b, formats::fp16).bits);
  }
  DotModel hmma = model;
  hmma.structure = DotStructure::fused;
  hmma.block_size = DotModel::whole_k;
  const Conversion first = fused_instruction(hmma, formats::fp16, formats::fp16, group_a[0], group_b[0], 0, out);
  const Conversion second =
      fused_instruction(hmma, formats::fp16, formats::fp16, group_a[1], group_b[1], first.bits, out);
  return add_nearest(second.bits, c, out);
}

Conversion pairwise_instruction(const DotModel& model, const Format& input_a, const Format& input_b,
                                std::span<const std::uint64_t> a, std::span<const std::uint64_t> b, std::uint64_t c) {
  const Format& fp32 = formats::fp32;
  const Products p = products(input_a, input_b, a, b, /*flush_subnormals=*/true);
  Special s = p.special;
  const Unpacked cc = unpack(fp32, c);
  s.note(cc.is_nan(), cc.is_inf(), cc.sign);
  if (s.decides()) return s.result(fp32);
  // Each product rounded to fp32 (exact for fp16 and bf16 unless it
  // overflows), flushed below 2^-126; missing slots of a short last
  // instruction are +0, as zero padding.
  DotModel nearest;
  nearest.fp32_rounding = Rounding::rne;
  std::vector<std::uint64_t> level(static_cast<std::size_t>(std::max(model.block_size, 1)), 0);
  if ((level.size() & (level.size() - 1)) != 0 || level.size() < p.terms.size()) {
    throw std::invalid_argument("pairwise: the block size must be a power of two that holds every product");
  }
  for (std::size_t k = 0; k < p.terms.size(); ++k) {
    level[k] = flush(round_block(nearest, std::span(&p.terms[k], 1), fp32).bits);
  }
  while (level.size() > 1) {  // (p0 + p1) + (p2 + p3): halves first, each addition flushed
    for (std::size_t i = 0; i < level.size() / 2; ++i) {
      level[i] = flush(add_nearest(level[2 * i], level[2 * i + 1], fp32).bits);
    }
    level.resize(level.size() / 2);
  }
  const Conversion d = add_nearest(flush(c), level[0], fp32);
  return {flush(d.bits), d.flags};
}

Conversion late_c_instruction(const DotModel& model, const Format& input_a, const Format& input_b,
                              std::span<const std::uint64_t> a, std::span<const std::uint64_t> b, std::uint64_t c) {
  const Format& fp32 = formats::fp32;
  const Products p = products(input_a, input_b, a, b);
  Special s = p.special;
  // A product of 2^128 or more is infinite at once (both signs: NaN).
  for (const Term& t : p.terms) {
    if (t.magnitude != 0 && t.lsb + static_cast<int>(std::bit_width(t.magnitude)) - 1 > fp32.max_exponent()) {
      s.note(false, true, t.negative);
    }
  }
  const Unpacked cc = unpack(fp32, c);
  s.note(cc.is_nan(), cc.is_inf(), cc.sign);
  if (s.decides()) return s.result(fp32);

  const int f = model.fraction_bits;
  PartialSum sum;
  if (model.structure == DotStructure::late_c) {
    sum = block_sum(p.terms, 0, 1, f);
  } else {  // even and odd k, then the smaller-exponent sum rounded down onto the larger's units
    const PartialSum even = block_sum(p.terms, 0, 2, f), odd = block_sum(p.terms, 1, 2, f);
    if (!even.any || !odd.any) {
      sum = even.any ? even : odd;
    } else {
      const PartialSum& big = even.e_max >= odd.e_max ? even : odd;
      const PartialSum& small = even.e_max >= odd.e_max ? odd : even;
      sum = big;
      sum.sum += shift_down(small.sum, big.unit - small.unit);
    }
  }

  const Term ct = to_term(cc, fp32);
  DotModel nearest;
  nearest.fp32_rounding = Rounding::rne;
  if (!sum.any) {  // no nonzero product: D is C
    const Term terms[] = {ct};
    Conversion d = round_block(nearest, terms, fp32);
    if (ct.magnitude == 0) d.bits = (cc.sign && p.all_negative_zero) ? fp32.sign_bit() : 0;
    return d;
  }
  // C's exponent, at least -126 (a zero C counts as 2^-126).
  const int e_c = ct.magnitude != 0 ? ct.align : fp32.min_exponent();
  const std::int64_t c_signed = ct.negative ? -static_cast<std::int64_t>(ct.magnitude)
                                            : static_cast<std::int64_t>(ct.magnitude);
  std::int64_t total = 0;
  int unit = 0;
  if (sum.e_max < e_c) {  // C sets the units; the sum is rounded down onto them
    unit = e_c - f - late_c_extra_bits;
    total = shift_down(sum.sum, unit - sum.unit) + shift_down(c_signed, unit - ct.lsb);
  } else {  // the sum sets the units; C is rounded down onto them (FP8: truncated when far below)
    unit = sum.unit;
    const bool truncate = model.structure == DotStructure::odd_even && e_c < sum.e_max - odd_even_c_truncation_binades;
    total = sum.sum + (truncate ? shift_toward_zero(c_signed, unit - ct.lsb) : shift_down(c_signed, unit - ct.lsb));
  }
  if (total == 0) return {0, {}};
  return round_to_format(fixed_point_value(total, unit), fp32, block_rounding(nearest, fp32).policy);
}

}  // namespace fmtcheck::detail
