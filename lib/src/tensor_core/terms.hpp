// The pieces every instruction structure is built from (tensor_core.cpp,
// structures.cpp): exact terms, the special-value rules, the fused block and
// one IEEE addition, all rounding through round_to_format.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/round_to_format.hpp"
#include "fmtcheck/core/unpacked.hpp"
#include "fmtcheck/tensor_core/tensor_core.hpp"

namespace fmtcheck::detail {

// An exact finite term: (-1)^negative * magnitude * 2^lsb, aligned by its
// exponent `align`. Hardware aligns a product by the sum of its operands'
// exponents (its significand lies in [1, 4), not normalised), and reads a
// subnormal's exponent as that of the lowest binade, as its exponent field
// says; the published A100 and H100 data confirm both.
struct Term {
  bool negative = false;
  std::uint64_t magnitude = 0;  // 0 for a zero term
  int lsb = 0;
  int align = 0;
};

// The integer significand of a finite unpacked value of format f.
Term to_term(const Unpacked& x, const Format& f);
Term product(const Term& x, const Term& y);

// The truncated terms summed in units of 2^unit. Acc is std::int64_t when the
// terms are narrow (every hardware model) and cpp_int when every bit is kept.
template <class Acc>
Acc sum_aligned(std::span<const Term> terms, int unit) {
  Acc sum = 0;
  for (const Term& t : terms) {
    if (t.magnitude == 0) continue;
    const int shift = unit - t.lsb;
    Acc m;
    if (shift >= 64) continue;  // the whole term lies below the kept bits
    if (shift > 0) {
      m = static_cast<Acc>(t.magnitude >> shift);  // truncation toward zero
    } else {
      m = static_cast<Acc>(t.magnitude);
      m <<= -shift;
    }
    if (t.negative) sum -= m; else sum += m;
  }
  return sum;
}

// What the special inputs of an instruction decide, if anything: any NaN,
// inf*0 or inf-inf gives the canonical NaN (0x7FFFFFFF, 0x7FFF), otherwise
// an infinite term gives that infinity.
struct Special {
  bool nan = false;
  bool pos_inf = false;
  bool neg_inf = false;

  void note(bool is_nan, bool is_inf, bool sign);
  [[nodiscard]] bool decides() const { return nan || pos_inf || neg_inf; }
  [[nodiscard]] Conversion result(const Format& out) const;
};

// The products a[k]*b[k] of one instruction as terms, in order of k (zero
// products included), with the specials among them. flush_subnormals reads
// subnormal operands as zero.
struct Products {
  std::vector<Term> terms;
  Special special;
  bool all_negative_zero = true;  // every product is -0
};
Products products(const Format& input_a, const Format& input_b, std::span<const std::uint64_t> a,
                  std::span<const std::uint64_t> b, bool flush_subnormals = false);

// One fused block: terms (products, then C) -> bits of `out`.
Conversion round_block(const DotModel& model, std::span<const Term> terms, const Format& out);
// x + y for bits of `out`, rounded once to nearest even (an IEEE addition).
Conversion add_nearest(std::uint64_t x, std::uint64_t y, const Format& out);

// The structures other than `fused` (structures.cpp): one instruction over
// a.size() <= L products with C.
Conversion fused_instruction(const DotModel& model, const Format& input_a, const Format& input_b,
                             std::span<const std::uint64_t> a, std::span<const std::uint64_t> b, std::uint64_t c,
                             const Format& out);
Conversion fp16_groups_instruction(const DotModel& model, const Format& input_a, const Format& input_b,
                                   std::span<const std::uint64_t> a, std::span<const std::uint64_t> b, std::uint64_t c,
                                   const Format& out);
Conversion pairwise_instruction(const DotModel& model, const Format& input_a, const Format& input_b,
                                std::span<const std::uint64_t> a, std::span<const std::uint64_t> b, std::uint64_t c);
Conversion late_c_instruction(const DotModel& model, const Format& input_a, const Format& input_b,
                              std::span<const std::uint64_t> a, std::span<const std::uint64_t> b, std::uint64_t c);

}  // namespace fmtcheck::detail
