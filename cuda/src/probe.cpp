// The probe suite (see probe.hpp). Every probe is built from powers of two
// (and 1.5) so that the exact answer of each yes/no question is known without
// computing any dot product: the oracle's output is compared with ±2^e only.
#include "fmtcheck/cuda/probe.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <stdexcept>

#include "fmtcheck/core/convert.hpp"
#include "fmtcheck/core/decode.hpp"

namespace fmtcheck::cuda {
namespace {

// Exact bits of ±m·2^e in f, or nullopt when f cannot hold it exactly.
std::optional<std::uint64_t> exact_bits(const Format& f, double m, int e, bool negative) {
  const double v = std::ldexp(negative ? -m : m, e);
  if (!std::isfinite(v) || v == 0) return std::nullopt;
  const Conversion c = convert(v, f);
  if (c.flags.has(Flag::inexact) || c.flags.has(Flag::overflow) || c.flags.has(Flag::underflow)) return std::nullopt;
  return c.bits;
}

// The exponent range the probes may use, and where "big" terms live.
struct Ranges {
  int big = 0;  // e0: exponent of the big products (and of C)
  int gap = 0;  // widest distance below e0 a term and a result can have
};

Ranges ranges_for(const ProbeTarget& t) {
  const int in_top = 2 * t.input.max_exponent();
  const int in_bottom = 2 * (t.input.min_exponent() - t.input.mantissa_bits);
  // Room for a sum of up to 32 big terms in the output.
  const int out_top = t.output.max_exponent() - 6;
  const int out_bottom = t.output.min_exponent() - t.output.mantissa_bits;
  Ranges r;
  r.big = std::min(in_top, out_top);
  r.gap = std::min(r.big - std::max(in_bottom, out_bottom), 40);
  return r;
}

// A dot product of K products (zero unless set) plus c.
class Probe {
 public:
  Probe(const ProbeTarget& t) : t_(t), a_(t.k, 0), b_(t.k, 0), c_(0) {}

  // Sets product k to ±ma·mb·2^e (ma, mb in {1, 1.5}): a = ±ma·2^ea,
  // b = mb·2^eb with ea + eb = e, both normal where possible, as close to
  // each other as can be. Returns false when the input format cannot express it.
  bool set_product(int k, int e, bool negative, double ma = 1.0, double mb = 1.0) {
    const Format& in = t_.input;
    const int lo = in.min_exponent() - in.mantissa_bits, hi = in.max_exponent();
    std::optional<std::pair<std::uint64_t, std::uint64_t>> best;
    int best_score = 0;
    for (int ea = lo; ea <= hi; ++ea) {
      const int eb = e - ea;
      const auto a = exact_bits(in, ma, ea, negative);
      const auto b = exact_bits(in, mb, eb, false);
      if (!a || !b) continue;
      const int subnormals = (ea < in.min_exponent()) + (eb < in.min_exponent());
      const int score = subnormals * 1000 + std::abs(ea - eb);
      if (!best || score < best_score) best = std::make_pair(*a, *b), best_score = score;
    }
    if (!best) return false;
    a_.at(k) = best->first;
    b_.at(k) = best->second;
    return true;
  }
  void set_raw(int k, std::uint64_t a, std::uint64_t b) { a_.at(k) = a, b_.at(k) = b; }
  bool set_c(int e, bool negative, double m = 1.0) {
    const auto c = exact_bits(t_.output, m, e, negative);
    if (c) c_ = *c;
    return c.has_value();
  }
  void set_c_raw(std::uint64_t c) { c_ = c; }

  [[nodiscard]] std::uint64_t run(const DotOracle& oracle) const { return oracle(a_, b_, c_); }
  // The result as a double (exact: every output fits).
  [[nodiscard]] double value(const DotOracle& oracle) const { return to_double(t_.output, run(oracle)); }

 private:
  const ProbeTarget& t_;
  std::vector<std::uint64_t> a_, b_;
  std::uint64_t c_;
};

// Does 2^(e0 - j) survive beside 2^e0 − 2^e0 in one block? Products 0..2,
// so the probes assume L ≥ 3 whenever terms are cut (every published L is 4 or more).
bool term_survives(const ProbeTarget& t, const Ranges& r, int j, const DotOracle& oracle) {
  Probe p(t);
  p.set_product(0, r.big, false);
  p.set_product(1, r.big, true);
  if (!p.set_product(2, r.big - j, false)) throw std::logic_error("probe: term out of range");
  return p.value(oracle) == std::ldexp(1.0, r.big - j);
}

void infer_alignment(const ProbeTarget& t, const Ranges& r, const DotOracle& oracle, InferredArithmetic& found) {
  for (int j = 1; j <= r.gap; ++j) {
    if (!term_survives(t, r, j, oracle)) {
      found.fraction_bits = j - 1;
      return;
    }
  }
  found.alignment_exact = true;
  found.fraction_bits = r.gap;
}

// L: where does a term first land in a later block? With truncation (F
// finite) a term cut beside big − big survives alone in the next block; with
// exact alignment, a term rounded away with C = big reappears when −big
// shares C's block.
void infer_block_size(const ProbeTarget& t, const Ranges& r, const DotOracle& oracle, InferredArithmetic& found) {
  const int small_exp = r.big - std::min(found.fraction_bits + 1, r.gap);
  const double small = std::ldexp(1.0, small_exp);
  for (int i = found.alignment_exact ? 1 : 2; i < t.k; ++i) {
    Probe p(t);
    bool split = false;
    if (found.alignment_exact) {
      p.set_c(r.big, false);
      p.set_product(0, small_exp, false);
      p.set_product(i, r.big, true);
      split = p.value(oracle) != small;
    } else {
      p.set_product(0, r.big, false);
      p.set_product(1, r.big, true);
      p.set_product(i, small_exp, false);
      split = p.value(oracle) == small;
    }
    if (split) {
      found.block_size = i;
      return;
    }
  }
  found.block_size = t.k;
  found.block_covers_k = true;
}

// Where the output probes put their products: the last block, so that no
// later block passes the result through the alignment again (C is a term
// of every block and would be cut at F bits below its own exponent). With
// exact alignment every block passes exact values through unchanged.
struct Window {
  int start = 0;
  int size = 0;
};

Window output_window(const ProbeTarget& t, const InferredArithmetic& found) {
  if (found.alignment_exact) return {0, t.k};
  const int start = found.block_covers_k ? 0 : (t.k - 1) / found.block_size * found.block_size;
  return {start, t.k - start};
}

// n = 2^j products 1.5·1.5·2^e0 = 2.25·2^e0 (n + extra ≤ the window) sum to
// 1.125·2^(e0+m), m = j + 1: m binades above e_max, so the output's own
// precision shows beyond F. Returns -1 when even n = 1 does not fit.
int carry_bits(const Window& w, int extra) {
  if (1 + extra > w.size) return -1;
  int j = 0;
  while ((2 << j) + extra <= w.size) ++j;
  return j + 1;
}

// Sets the carry products (at w.start on) and returns their sum.
double set_carry(Probe& p, const Window& w, int m, int e0, bool negative) {
  const int n = 1 << (m - 1);
  for (int k = 0; k < n; ++k) p.set_product(w.start + k, e0, negative, 1.5, 1.5);
  return std::ldexp(2.25 * n, e0);
}

// Base 2^(e0+m) + 2^(e0+m-q) for growing q: the largest q returned exactly
// is the output's fraction bits, up to what a surviving term reaches (m + F).
// When the last block has no room for a carry, the base is C (m = 0).
void infer_output_bits(const ProbeTarget& t, const Ranges& r, const DotOracle& oracle, InferredArithmetic& found) {
  const Window w = output_window(t, found);
  const int carry = carry_bits(w, 1);
  const int m = std::max(carry, 0);
  const int limit = std::min(t.output.mantissa_bits, m + found.fraction_bits);
  // Terms start one binade below e0, where products can still be formed: q = m + 1.
  found.output_fraction_bits = m;
  for (int q = m + 1; q <= limit; ++q) {
    Probe p(t);
    double base = std::ldexp(1.0, r.big);
    int next = w.start;
    if (carry < 0) {
      p.set_c(r.big, false);
    } else {
      base = set_carry(p, w, m, r.big, false);
      next += 1 << (m - 1);
    }
    p.set_product(next, r.big + m - q, false);
    if (p.value(oracle) != base + std::ldexp(1.0, r.big + m - q)) break;
    found.output_fraction_bits = q;
  }
  found.output_bits_bound = found.output_fraction_bits == limit && limit < t.output.mantissa_bits;
}

// Which rounding sends |base + q/4 ulp| (base even, or odd with o) up, sign s.
bool rounds_up(Rounding mode, int q, bool odd, bool negative) {
  switch (mode) {
    case Rounding::rtz: return false;
    case Rounding::rne: return q > 2 || (q == 2 && odd);
    case Rounding::rna: return q >= 2;
    case Rounding::rup: return !negative;
    case Rounding::rdn: return negative;
    case Rounding::rto: return !odd;
    case Rounding::sr:
    case Rounding::sr_rne:
    case Rounding::sr_rna:
    case Rounding::sr_rno: return false;
  }
  return false;
}

// |base + q/4 ulp| for q = 1, 2, 3 (3/4 as one product 1.5·2^(x+1)), base
// even or odd, both signs, in one block with one rounding. The base is C
// when a quarter ulp of it survives alignment (F >= P + 2); otherwise the
// carry products of the last block, whose sum lies m binades above e_max.
void infer_output_rounding(const ProbeTarget& t, const Ranges& r, const DotOracle& oracle,
                           InferredArithmetic& found) {
  const int p_bits = found.output_fraction_bits;
  const Window w = output_window(t, found);
  const bool base_in_c = found.alignment_exact || found.fraction_bits >= p_bits + 2;
  const int m = base_in_c ? 0 : carry_bits(w, 2);
  const int ulp = r.big + m - p_bits;
  if (m < 0 || found.output_bits_bound || (!base_in_c && r.big - (ulp - 2) > found.fraction_bits)) return;
  const Rounding modes[] = {Rounding::rtz, Rounding::rne, Rounding::rna, Rounding::rup, Rounding::rdn, Rounding::rto};
  std::vector<Rounding> consistent(std::begin(modes), std::end(modes));
  for (const bool negative : {false, true}) {
    for (const bool odd : {false, true}) {
      for (int q = 1; q <= 3; ++q) {
        Probe p(t);
        int next = w.start;
        double base = std::ldexp(1.0, r.big);
        if (base_in_c) {
          p.set_c(r.big, negative);
        } else {
          base = set_carry(p, w, m, r.big, negative);
          next += 1 << (m - 1);
        }
        if (odd) {
          if (base_in_c) p.set_c(r.big, negative, 1.0 + std::ldexp(1.0, -p_bits));
          else p.set_product(next++, ulp, negative);
          base += std::ldexp(1.0, ulp);
        }
        const bool ok = q == 3 ? p.set_product(next, ulp - 1, negative, 1.5)
                               : p.set_product(next, ulp - 2 + (q == 2), negative);
        if (!ok) return;
        const double got = std::abs(p.value(oracle));
        bool up = false;
        if (got == base + std::ldexp(1.0, ulp)) up = true;
        else if (got != base) return;  // neither neighbour: no rounding mode explains it
        std::erase_if(consistent, [&](Rounding mode) { return rounds_up(mode, q, odd, negative) != up; });
      }
    }
  }
  if (consistent.size() == 1) found.output_rounding = consistent.front();
}

// Does 0 × 2^emax take part in e_max with its exponent field's value (the
// lowest binade) plus emax? A term 2^(z − F − 3) beside it then vanishes.
// The term is a product where the input format reaches it, else C (FP8 with
// a large F: 2^(z − F − 3) lies below the smallest product).
void infer_zero_terms(const ProbeTarget& t, const DotOracle& oracle, InferredArithmetic& found) {
  if (found.alignment_exact) return;
  const int z = t.input.min_exponent() + t.input.max_exponent();
  const int e = z - found.fraction_bits - 3;
  Probe p(t);
  p.set_raw(0, 0, *exact_bits(t.input, 1.0, t.input.max_exponent(), false));
  if (!exact_bits(t.output, 1.0, e, false)) return;
  if (!p.set_product(1, e, false)) p.set_c(e, false);
  const double v = p.value(oracle);
  if (v == std::ldexp(1.0, e)) found.zero_terms_align = false;
  else if (v == 0) found.zero_terms_align = true;
}

// tf32 operands come in fp32 registers: 1 + 2^-11 + 2^-12 lies above the
// midpoint between the tf32 neighbours 1 and 1 + 2^-10.
void infer_tf32_operands(const ProbeTarget& t, const DotOracle& oracle, InferredArithmetic& found) {
  if (!(t.input == formats::tf32)) return;
  Probe p(t);
  const std::uint64_t one = 0x3F800000;
  p.set_raw(0, one | (1u << 12) | (1u << 11), one);
  const double v = p.value(oracle);
  if (v == 1.0) found.tf32_operands_rounded = false;
  else if (v == 1.0 + std::ldexp(1.0, -10)) found.tf32_operands_rounded = true;
}

void infer_specials(const ProbeTarget& t, const DotOracle& oracle, InferredArithmetic& found) {
  const Format& in = t.input;
  const std::uint64_t one = *exact_bits(in, 1.0, 0, false);
  const std::uint64_t nan = in.to_storage(in.specials == Specials::ieee
                                              ? in.infinity_code() | (std::uint64_t{1} << (in.mantissa_bits - 1))
                                              : in.magnitude_mask());
  Probe p(t);
  p.set_raw(0, nan, one);
  found.nan_operand = p.run(oracle);
  if (!in.has_inf()) return;
  const std::uint64_t inf = in.to_storage(in.infinity_code());
  const std::uint64_t minus_inf = inf | in.to_storage(in.sign_bit());
  Probe times_zero(t);
  times_zero.set_raw(0, inf, 0);
  found.inf_times_zero = times_zero.run(oracle);
  Probe minus(t);
  minus.set_raw(0, inf, one);
  minus.set_raw(1, minus_inf, one);
  found.inf_minus_inf = minus.run(oracle);
  Probe plus(t);
  plus.set_raw(0, inf, one);
  plus.set_raw(1, one, one);
  found.inf_plus_finite = plus.run(oracle);
}

std::string rounding_name(std::optional<Rounding> r) { return r ? std::string(to_string(*r)) : "none fits"; }

std::string yes_no(std::optional<bool> v) { return v ? (*v ? "yes" : "no") : "not measurable"; }

}  // namespace

InferredArithmetic infer_arithmetic(const ProbeTarget& target, const DotOracle& oracle) {
  if (!is_tensor_core_output(target.output)) throw std::invalid_argument("probe: output must be fp32 or fp16");
  if (target.k < 4) throw std::invalid_argument("probe: K must be at least 4");
  const Ranges r = ranges_for(target);
  if (r.gap < 8) throw std::invalid_argument("probe: " + target.input.name + " to " + target.output.name +
                                             " leaves too little exponent range");
  InferredArithmetic found;
  infer_alignment(target, r, oracle, found);
  infer_block_size(target, r, oracle, found);
  infer_output_bits(target, r, oracle, found);
  infer_output_rounding(target, r, oracle, found);
  infer_zero_terms(target, oracle, found);
  infer_tf32_operands(target, oracle, found);
  infer_specials(target, oracle, found);
  return found;
}

DotOracle model_oracle(const DotModel& model, const ProbeTarget& target) {
  return [model, input = target.input, output = target.output](std::span<const std::uint64_t> a,
                                                                std::span<const std::uint64_t> b, std::uint64_t c) {
    return dot_product_add(model, input, a, b, c, output).bits;
  };
}

std::vector<ParameterRow> compare_with_model(const ProbeTarget& target, const InferredArithmetic& found,
                                             const DotModel& model, const InferredArithmetic& model_specials) {
  std::vector<ParameterRow> rows;
  auto add = [&](std::string name, std::string inferred, std::string expected, bool agrees) {
    rows.push_back({std::move(name), std::move(inferred), std::move(expected), agrees});
  };
  const auto block_text = [&](const InferredArithmetic& x) {
    return x.block_covers_k ? fmt::format(">= {} (K)", target.k) : std::to_string(x.block_size);
  };
  const auto alignment_text = [](const InferredArithmetic& x) {
    return x.alignment_exact ? fmt::format(">= {} (nothing cut)", x.fraction_bits) : std::to_string(x.fraction_bits);
  };
  const auto bits_text = [](const InferredArithmetic& x) {
    return (x.output_bits_bound ? ">= " : "") + std::to_string(x.output_fraction_bits);
  };
  if (model.structure != DotStructure::fused) {
    // A model that is not one fused block (FP8 mma.sync through fp16 blocks)
    // has no single L and F: the probes must find on the hardware what they
    // find on the model.
    const InferredArithmetic& m = model_specials;
    add("block size L", block_text(found), block_text(m), block_text(found) == block_text(m));
    add("alignment bits F", alignment_text(found), alignment_text(m), alignment_text(found) == alignment_text(m));
    add("output fraction bits", bits_text(found), bits_text(m), bits_text(found) == bits_text(m));
    add("output rounding", rounding_name(found.output_rounding), rounding_name(m.output_rounding),
        found.output_rounding == m.output_rounding);
    add("zero terms set e_max", yes_no(found.zero_terms_align), yes_no(m.zero_terms_align),
        found.zero_terms_align == m.zero_terms_align);
  } else {
    const bool model_whole = model.block_size == DotModel::whole_k;
    add("block size L", block_text(found), model_whole ? "all K" : std::to_string(model.block_size),
        found.block_covers_k ? model_whole || model.block_size >= target.k : model.block_size == found.block_size);

    const bool model_exact = model.fraction_bits == DotModel::exact_alignment;
    add("alignment bits F", alignment_text(found), model_exact ? "exact" : std::to_string(model.fraction_bits),
        found.alignment_exact ? model_exact || model.fraction_bits >= found.fraction_bits
                              : model.fraction_bits == found.fraction_bits);

    const bool fp32 = target.output == formats::fp32;
    const int model_bits = fp32 ? model.fp32_fraction_bits : target.output.mantissa_bits;
    add("output fraction bits", bits_text(found), std::to_string(model_bits),
        found.output_bits_bound ? model_bits >= found.output_fraction_bits : model_bits == found.output_fraction_bits);

    const Rounding model_rounding = fp32 ? model.fp32_rounding : model.fp16_rounding;
    add("output rounding", rounding_name(found.output_rounding), std::string(to_string(model_rounding)),
        found.output_rounding == model_rounding);

    // fmtcheck's model never lets a zero product set e_max.
    add("zero terms set e_max", yes_no(found.zero_terms_align), "no",
        !found.zero_terms_align.has_value() || !*found.zero_terms_align);
  }
  if (target.input == formats::tf32) {
    add("tf32 operand low bits", found.tf32_operands_rounded ? (*found.tf32_operands_rounded ? "rounded" : "cut")
                                                             : "neither",
        "cut", found.tf32_operands_rounded == false);
  }
  auto hex = [&](std::optional<std::uint64_t> v) { return v ? to_hex(target.output, *v) : std::string("n/a"); };
  add("NaN operand ->", hex(found.nan_operand), hex(model_specials.nan_operand),
      found.nan_operand == model_specials.nan_operand);
  add("inf * 0 ->", hex(found.inf_times_zero), hex(model_specials.inf_times_zero),
      found.inf_times_zero == model_specials.inf_times_zero);
  add("inf - inf ->", hex(found.inf_minus_inf), hex(model_specials.inf_minus_inf),
      found.inf_minus_inf == model_specials.inf_minus_inf);
  add("inf + 1 ->", hex(found.inf_plus_finite), hex(model_specials.inf_plus_finite),
      found.inf_plus_finite == model_specials.inf_plus_finite);
  return rows;
}

}  // namespace fmtcheck::cuda
