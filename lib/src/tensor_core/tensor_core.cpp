// The fused block of a tensor core: exact products, alignment to the largest
// term with truncation toward zero, exact sum, one normalisation and rounding
// through round_to_format; and dot_product_add, which chains instructions of
// any structure along k.
#include "fmtcheck/tensor_core/tensor_core.hpp"

#include <algorithm>
#include <bit>
#include <boost/multiprecision/cpp_int.hpp>
#include <stdexcept>

#include "fmtcheck/core/unpacked.hpp"
#include "tensor_core/terms.hpp"

namespace fmtcheck {
namespace detail {

Conversion Special::result(const Format& out) const {
  if (nan || (pos_inf && neg_inf)) return {out.to_storage(out.magnitude_mask()), Flags(Flag::invalid)};  // 0x7FFFFFFF, 0x7FFF
  return {out.to_storage((neg_inf ? out.sign_bit() : 0) | out.infinity_code()), {}};
}

Products products(const Format& input_a, const Format& input_b, std::span<const std::uint64_t> a,
                  std::span<const std::uint64_t> b, bool flush_subnormals) {
  Products p;
  p.terms.reserve(a.size() + 1);
  for (std::size_t i = 0; i < a.size(); ++i) {
    Unpacked x = unpack(input_a, a[i]);
    Unpacked y = unpack(input_b, b[i]);
    if (flush_subnormals) {
      if (x.is_finite_nonzero() && x.exponent < input_a.min_exponent()) x.kind = Unpacked::Kind::zero;
      if (y.is_finite_nonzero() && y.exponent < input_b.min_exponent()) y.kind = Unpacked::Kind::zero;
    }
    p.special.note(x.is_nan() || y.is_nan() || (x.is_inf() && y.is_zero()) || (x.is_zero() && y.is_inf()),
                   x.is_inf() || y.is_inf(), x.sign != y.sign);
    p.terms.push_back(product(to_term(x, input_a), to_term(y, input_b)));
    p.all_negative_zero &= p.terms.back().negative && p.terms.back().magnitude == 0;
  }
  return p;
}

namespace {

Unpacked to_unpacked(const boost::multiprecision::cpp_int& sum, int unit) {
  using boost::multiprecision::cpp_int;
  const cpp_int m = boost::multiprecision::abs(sum);
  const int bits = static_cast<int>(boost::multiprecision::msb(m)) + 1;
  if (bits <= 64) return unpack_sum(static_cast<std::uint64_t>(m), bits, false, sum < 0, unit);
  const int drop = bits - 64;
  // Any of the dropped low bits set: m != 0, so its lowest set bit exists.
  const bool sticky = boost::multiprecision::lsb(m) < static_cast<unsigned>(drop);
  return unpack_sum(static_cast<std::uint64_t>(m >> drop), 64, sticky, sum < 0, unit + drop);
}

}  // namespace

Conversion round_block(const DotModel& model, std::span<const Term> terms, const Format& out) {
  const auto [target, p] = detail::block_rounding(model, out);

  int e_max = 0;
  int lsb_min = 0;
  bool any = false;
  bool all_negative_zero = true;
  for (const Term& t : terms) {
    all_negative_zero &= t.negative & (t.magnitude == 0);  // no branch on random signs
    if (t.magnitude == 0) continue;
    e_max = any ? std::max(e_max, t.align) : t.align;
    lsb_min = any ? std::min(lsb_min, t.lsb) : t.lsb;
    any = true;
  }
  // A sum of zeros is +0 unless every term is -0, as in IEEE addition.
  Unpacked zero;
  zero.sign = all_negative_zero;
  if (!any) return round_to_format(zero, target, p);

  const bool exact = model.fraction_bits == DotModel::exact_alignment;
  const int unit = exact ? lsb_min : e_max - model.fraction_bits;
  // Terms below 2^(e_max+2) in units of 2^unit need e_max + 2 - unit bits;
  // 64 - 24 leaves room for the carries of up to 2^23 terms.
  Unpacked sum;
  if (e_max + 2 - unit <= 40 && terms.size() < (std::size_t{1} << 23)) {
    const std::int64_t s = sum_aligned<std::int64_t>(terms, unit);
    if (s == 0) return round_to_format(zero, target, p);
    sum = detail::fixed_point_value(s, unit);
  } else {
    const auto s = sum_aligned<boost::multiprecision::cpp_int>(terms, unit);
    if (s == 0) return round_to_format(zero, target, p);
    sum = to_unpacked(s, unit);
  }
  // target shares fp32's container, so its bits are already fp32 bits.
  return round_to_format(sum, target, p);
}

Conversion add_nearest(std::uint64_t x, std::uint64_t y, const Format& out) {
  const Unpacked ux = unpack(out, x), uy = unpack(out, y);
  Special s;
  s.note(ux.is_nan(), ux.is_inf(), ux.sign);
  s.note(uy.is_nan(), uy.is_inf(), uy.sign);
  if (s.decides()) return s.result(out);
  const Term terms[] = {to_term(ux, out), to_term(uy, out)};
  DotModel exact;  // every bit kept, nearest even to either output
  exact.fp32_rounding = Rounding::rne;
  return round_block(exact, terms, out);
}

Conversion fused_instruction(const DotModel& model, const Format& input_a, const Format& input_b,
                             std::span<const std::uint64_t> a, std::span<const std::uint64_t> b, std::uint64_t c,
                             const Format& out) {
  Products p = products(input_a, input_b, a, b);
  const Unpacked cc = unpack(out, c);
  p.special.note(cc.is_nan(), cc.is_inf(), cc.sign);
  if (p.special.decides()) return p.special.result(out);
  p.terms.push_back(to_term(cc, out));
  return round_block(model, p.terms, out);
}

}  // namespace detail

namespace {

// One instruction of the model's structure over a.size() <= L products.
Conversion instruction(const DotModel& model, const Format& input_a, const Format& input_b,
                       std::span<const std::uint64_t> a, std::span<const std::uint64_t> b, std::uint64_t c,
                       const Format& out) {
  switch (model.structure) {
    case DotStructure::fused: return detail::fused_instruction(model, input_a, input_b, a, b, c, out);
    case DotStructure::fp16_groups: return detail::fp16_groups_instruction(model, input_a, input_b, a, b, c, out);
    case DotStructure::pairwise: return detail::pairwise_instruction(model, input_a, input_b, a, b, c);
    case DotStructure::late_c:
    case DotStructure::odd_even: return detail::late_c_instruction(model, input_a, input_b, a, b, c);
  }
  throw std::invalid_argument("dot_product_add: unknown structure");
}

}  // namespace

std::optional<DotModel> TensorCoreModel::for_input(const Format& input) const {
  for (const Entry& e : entries) {
    if (e.input == input.name) return e.dot;
  }
  if (takes_any_format()) return entries.front().dot;
  return std::nullopt;
}

DotModel TensorCoreModel::arithmetic_for(const Format& input) const {
  const auto dot = for_input(input);
  if (!dot) throw std::invalid_argument("model '" + name + "' has no published arithmetic for " + input.name + " inputs");
  return *dot;
}

std::optional<DotModel> TensorCoreModel::for_inputs(const Format& a, const Format& b) const {
  const std::optional<DotModel> da = for_input(a), db = for_input(b);
  if (!da || !db || *da != *db) return std::nullopt;
  return da;
}

bool is_tensor_core_output(const Format& out) { return out == formats::fp32 || out == formats::fp16; }

Conversion dot_product_add(const DotModel& model, const Format& input, std::span<const std::uint64_t> a,
                           std::span<const std::uint64_t> b, std::uint64_t c, const Format& out) {
  return dot_product_add(model, input, input, a, b, c, out);
}

Conversion dot_product_add(const DotModel& model, const Format& input_a, const Format& input_b,
                           std::span<const std::uint64_t> a, std::span<const std::uint64_t> b, std::uint64_t c,
                           const Format& out) {
  if (a.size() != b.size()) throw std::invalid_argument("dot_product_add: a and b differ in length");
  if (!is_tensor_core_output(out)) throw std::invalid_argument("dot_product_add: output must be fp32 or fp16");
  if (out != formats::fp32 && !model.writes_fp16) throw std::invalid_argument("dot_product_add: fp32 output only");
  const std::size_t k = a.size();
  const std::size_t block = model.block_size == DotModel::whole_k ? std::max<std::size_t>(k, 1)
                                                                  : static_cast<std::size_t>(model.block_size);
  if (model.structure == DotStructure::pairwise) {
    // CDNA2's model decides NaN and infinity from every operand and the
    // first C before any arithmetic (GEMM.m), then adds in IEEE arithmetic.
    detail::Special s = detail::products(input_a, input_b, a, b).special;
    const Unpacked cc = unpack(out, c);
    s.note(cc.is_nan(), cc.is_inf(), cc.sign);
    if (s.decides()) return s.result(out);
  }
  Conversion d{c, {}};
  std::size_t k0 = 0;
  do {  // each instruction's D is the next one's C
    const std::size_t len = std::min(k, k0 + block) - k0;
    d = instruction(model, input_a, input_b, a.subspan(k0, len), b.subspan(k0, len), d.bits, out);
    k0 += len;
  } while (k0 < k);
  return d;
}

namespace detail {

Decoded decode_term(const Format& f, std::uint64_t bits) {
  const Unpacked x = unpack(f, bits);
  return {to_term(x, f), x.is_nan(), x.is_inf()};
}

void check_block_scaled(const BlockScaledModel& model, const Format& input, const Format& scale_format,
                        std::size_t scale_block, const char* caller) {
  if (scale_format != formats::e8m0 && scale_format != formats::e4m3) {
    throw std::invalid_argument(std::string(caller) + ": scales are e8m0 or e4m3, not " + scale_format.name);
  }
  // A group's exact sum spans at most 2 * (binades + mantissa bits) + 2p + 4 bits.
  const int binades = (1 << input.exponent_bits) - 1 - input.bias - input.min_exponent();
  if (model.group != 0 && (scale_block % model.group != 0 ||
                           2 * (binades + input.mantissa_bits + input.precision()) + 4 > 62)) {
    throw std::invalid_argument(std::string(caller) + ": a group must divide the scale block, and " + input.name +
                                " group sums do not fit in 64 bits");
  }
}

Decoded decode_scale(const Format& scale_format, std::uint64_t bits) {
  Decoded d = decode_term(scale_format, bits);
  d.term.negative = false;  // UE4M3: the sign bit is ignored
  return d;
}

namespace {

// The product a*b as a term, noting what its specials decide in s.
Term noted_product(const Decoded& a, const Decoded& b, Special& s) {
  s.note(a.nan || b.nan || (a.inf && b.zero()) || (a.zero() && b.inf), a.inf || b.inf,
         a.term.negative != b.term.negative);
  return product(a.term, b.term);
}

// One group's products summed exactly, in units of the smallest lsb, then
// times both scales' significands: one term aligned by the scales' exponents
// only. Nothing when every product is zero.
void push_group_term(std::span<const Term> products, const Term& scales, std::vector<Term>& terms) {
  bool any = false;
  int lsb = 0;
  for (const Term& p : products) {
    if (p.magnitude == 0) continue;
    lsb = any ? std::min(lsb, p.lsb) : p.lsb;
    any = true;
  }
  if (!any) return;
  const auto sum = sum_aligned<std::int64_t>(products, lsb);
  const std::uint64_t magnitude = sum < 0 ? 0 - static_cast<std::uint64_t>(sum) : static_cast<std::uint64_t>(sum);
  terms.push_back({sum < 0, magnitude * scales.magnitude, lsb + scales.lsb, scales.align});
}

}  // namespace

Conversion block_scaled_instruction(const BlockScaledModel& model, std::span<const Decoded> a,
                                    std::span<const Decoded> b, std::span<const Decoded> scale_a,
                                    std::span<const Decoded> scale_b, std::uint64_t c, BlockScaledScratch& scratch) {
  const std::size_t scale_block = a.size() / scale_a.size();
  Special s;
  scratch.terms.clear();
  for (std::size_t j = 0; j < scale_a.size(); ++j) {
    s.note(scale_a[j].nan || scale_b[j].nan, scale_a[j].inf || scale_b[j].inf, false);
    const Term scales = product(scale_a[j].term, scale_b[j].term);
    const std::size_t k1 = (j + 1) * scale_block;
    if (model.group == 0) {  // each nonzero product, scaled, is a term
      for (std::size_t k = j * scale_block; k < k1; ++k) {
        const Term p = noted_product(a[k], b[k], s);
        if (p.magnitude != 0) scratch.terms.push_back(product(p, scales));
      }
      continue;
    }
    for (std::size_t k0 = j * scale_block; k0 < k1; k0 += model.group) {
      scratch.group.clear();
      for (std::size_t k = k0; k < k0 + model.group; ++k) scratch.group.push_back(noted_product(a[k], b[k], s));
      push_group_term(scratch.group, scales, scratch.terms);
    }
  }
  const Unpacked cc = unpack(formats::fp32, c);
  s.note(cc.is_nan(), cc.is_inf(), cc.sign);
  if (s.decides()) return s.result(formats::fp32);
  scratch.terms.push_back(to_term(cc, formats::fp32));
  DotModel block;
  block.fraction_bits = model.fraction_bits;
  return round_block(block, scratch.terms, formats::fp32);
}

}  // namespace detail

Conversion block_scaled_dot_product_add(const BlockScaledModel& model, const Format& input,
                                        std::span<const std::uint64_t> a, std::span<const std::uint64_t> b,
                                        const Format& scale_format, std::span<const std::uint64_t> scale_a,
                                        std::span<const std::uint64_t> scale_b, std::uint64_t c) {
  if (a.size() != b.size() || scale_a.size() != scale_b.size() || scale_a.empty() || a.size() % scale_a.size() != 0) {
    throw std::invalid_argument("block_scaled_dot_product_add: a, b and their scales do not divide into blocks");
  }
  detail::check_block_scaled(model, input, scale_format, a.size() / scale_a.size(), "block_scaled_dot_product_add");
  const auto decode = [](std::span<const std::uint64_t> bits, auto&& one) {
    std::vector<detail::Decoded> out;
    out.reserve(bits.size());
    for (const std::uint64_t x : bits) out.push_back(one(x));
    return out;
  };
  const auto element = [&](std::uint64_t x) { return detail::decode_term(input, x); };
  const auto scale = [&](std::uint64_t x) { return detail::decode_scale(scale_format, x); };
  detail::BlockScaledScratch scratch;
  return detail::block_scaled_instruction(model, decode(a, element), decode(b, element), decode(scale_a, scale),
                                          decode(scale_b, scale), c, scratch);
}

}  // namespace fmtcheck
