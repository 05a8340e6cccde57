// The instruction structures other than one fused block (DotStructure in
// tensor_core.hpp): FP8 mma.sync through fp16 blocks on Hopper and
// Blackwell, and AMD's CDNA2 and CDNA3 matrix cores. docs/tensor-core.md
// gives the source of each and the data or hand-built cases that pin it.
#include <algorithm>
#include <bit>
#include <stdexcept>

#include "fmtcheck/core/convert.hpp"
#include "tensor_core/terms.hpp"

namespace fmtcheck::detail {
namespace {

// fp32 bits with a subnormal value flushed to zero of its sign.
std::uint64_t flush(std::uint64_t bits) {
  const Unpacked u = unpack(formats::fp32, bits);
  if (u.is_finite_nonzero() && u.exponent < formats::fp32.min_exponent()) return bits & formats::fp32.sign_bit();
  return bits;
}

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
  // NaN and infinite operands and C were decided before the first
  // instruction (dot_product_add); from there on the arithmetic is IEEE's,
  // an infinite C from an earlier instruction included.
  const Format& fp32 = formats::fp32;
  const Products p = products(input_a, input_b, a, b, /*flush_subnormals=*/true);
  if (p.special.decides()) return p.special.result(fp32);
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
  const PartialSum sum = model.structure == DotStructure::late_c
                             ? block_sum(p.terms, 0, 1, f)
                             : combine_odd_even(block_sum(p.terms, 0, 2, f), block_sum(p.terms, 1, 2, f));
  return add_late_c(model, sum, c, p.all_negative_zero);
}

}  // namespace fmtcheck::detail
