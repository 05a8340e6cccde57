// The pieces every instruction structure is built from (tensor_core.cpp,
// structures.cpp): products of exact terms, the special-value rules, the
// fused block and one IEEE addition, all rounding through round_to_format.
// The integer arithmetic they share with the GPU is block_arithmetic.hpp's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/round_to_format.hpp"
#include "fmtcheck/core/unpacked.hpp"
#include "fmtcheck/tensor_core/block_arithmetic.hpp"
#include "fmtcheck/tensor_core/tensor_core.hpp"

namespace fmtcheck::detail {

// Inline, as is Special::note: the GEMMs call them once per product, where a
// call returning a Term through memory costs more than the multiplication.
inline Term product(const Term& x, const Term& y) {
  if (x.magnitude == 0 || y.magnitude == 0) return {x.negative != y.negative, 0, 0, 0};
  return {x.negative != y.negative, x.magnitude * y.magnitude, x.lsb + y.lsb, x.align + y.align};
}

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
    // Random signs mispredict a branch: negate without one where Acc allows.
    if constexpr (std::is_integral_v<Acc>) {
      const Acc sign = -static_cast<Acc>(t.negative);  // 0 or -1: m or -m
      sum += (m ^ sign) - sign;
    } else if (t.negative) {
      sum -= m;
    } else {
      sum += m;
    }
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

  void note(bool is_nan, bool is_inf, bool sign) {
    nan |= is_nan;
    if (is_inf) (sign ? neg_inf : pos_inf) = true;
  }
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

// A value decoded once, for a GEMM that reads it in many instructions: its
// term (magnitude 0 for zero, NaN and infinity; the sign kept) and its kind.
struct Decoded {
  Term term;
  bool nan = false;
  bool inf = false;

  [[nodiscard]] bool zero() const { return !nan && !inf && term.magnitude == 0; }
};
Decoded decode_term(const Format& f, std::uint64_t bits);

// Block-scaled instructions (block_scaled_dot_product_add), shared with the
// block-scaled GEMM so that one routine does their arithmetic. `caller`
// names the function in the messages of std::invalid_argument: a scale
// format other than e8m0 and e4m3, a group that does not divide the scale
// block, or group sums of `input` that do not fit in 64 bits.
void check_block_scaled(const BlockScaledModel& model, const Format& input, const Format& scale_format,
                        std::size_t scale_block, const char* caller);
// A scale factor: unsigned (UE4M3 ignores its sign bit).
Decoded decode_scale(const Format& scale_format, std::uint64_t bits);
// The buffers one thread reuses from instruction to instruction.
struct BlockScaledScratch {
  std::vector<Term> terms;
  std::vector<Term> group;
};
// One instruction over K = a.size() decoded elements with C = c (fp32 bits),
// a scale pair per S = K / scale_a.size() elements; sizes checked by the caller.
Conversion block_scaled_instruction(const BlockScaledModel& model, std::span<const Decoded> a,
                                    std::span<const Decoded> b, std::span<const Decoded> scale_a,
                                    std::span<const Decoded> scale_b, std::uint64_t c, BlockScaledScratch& scratch);

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
