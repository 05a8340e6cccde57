// The GEMM's inner kernel (gemm.hpp), written once for the CPU's gemm() and
// the GPU's (cuda/src/emulator/gemm.cu): operands decoded to integer
// significands and alignment exponents, the tensor core's blocks over a
// chunk of k for every structure (exact alignment in a wide integer), and
// the library's promotion, split-K and epilogue around them. It is an
// optimisation of dot_product_add, not a second definition:
// tests/tensor_core/test_gemm.cpp checks it bit for bit against
// dot_product_add, and the callers hand what it does not cover (NaN and
// infinity, CDNA3 operands of 2^63 or more, sums wider than a WideSum) to
// dot_product_add.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/host_device.hpp"
#include "fmtcheck/core/round_to_format.hpp"
#include "fmtcheck/core/unpacked.hpp"
#include "fmtcheck/tensor_core/block_arithmetic.hpp"
#include "fmtcheck/tensor_core/gemm.hpp"
#include "fmtcheck/tensor_core/tensor_core.hpp"

namespace fmtcheck::detail {

// The longest CDNA2 instruction the kernel sums (the presets' L is 4).
inline constexpr std::size_t max_pairwise_block = 64;

// A zero operand's exponent: so low that a product with it never sets e_max
// and its (zero) term needs no special case.
inline constexpr std::int32_t zero_align = -(1 << 20);

// A finite value as hardware aligns it: the raw integer significand (signed,
// subnormals not normalised) and its exponent; value = sig * 2^(align - m).
struct Operand {
  std::int32_t sig = 0;
  std::int32_t align = zero_align;
};

// Decodes through unpack(), so the kernel reads exactly the values the
// reference reads. `special` is set for NaN and infinity.
FMTCHECK_HD inline Operand decode_operand(const Encoding& f, std::uint64_t bits, bool& special) {
  const Unpacked x = unpack(f, bits);
  special = x.is_nan() || x.is_inf();
  if (!x.is_finite_nonzero()) return {};
  const int align = x.exponent > f.min_exponent() ? x.exponent : f.min_exponent();
  const auto mag = static_cast<std::int32_t>(x.significand >> (63 - f.mantissa_bits + (align - x.exponent)));
  return {x.sign ? -mag : mag, align};
}

FMTCHECK_HD inline float float_of_bits(std::uint32_t bits) {
  float x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}
FMTCHECK_HD inline std::uint32_t bits_of_float(float x) {
  std::uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
}

// An accumulator's bits (fp32, or fp16 widened exactly) as a float.
FMTCHECK_HD inline float accumulator_value(const Encoding& accumulator, std::uint32_t bits) {
  if (accumulator == encodings::fp32()) return float_of_bits(bits);
  const Conversion widened = round_to_format(unpack(accumulator, bits), encodings::fp32(), {});  // exact
  return float_of_bits(static_cast<std::uint32_t>(widened.bits));
}

// x + y for finite or special bits of `out` (at most 24 bits of precision:
// fp16 or fp32), rounded once to nearest even: the IEEE addition that
// add_nearest (terms.hpp) computes with an exact sum. Any NaN or inf - inf
// gives the canonical NaN, an infinity that infinity; a zero sum is +0
// unless both are -0. The term with the lower last bit is aligned onto the
// other's last bit less 38 guard bits; bits below are kept as `sticky`, the
// exact value lying strictly above the truncated sum (the larger term then
// has at least 37 bits more than the format keeps, so nearest even reads
// the right half).
FMTCHECK_HD inline std::uint32_t add_two_nearest(std::uint32_t x, std::uint32_t y, const Encoding& out) {
  const Unpacked ux = unpack(out, x), uy = unpack(out, y);
  const bool nan = ux.is_nan() || uy.is_nan() || (ux.is_inf() && uy.is_inf() && ux.sign != uy.sign);
  if (nan) return static_cast<std::uint32_t>(out.to_storage(out.magnitude_mask()));
  if (ux.is_inf() || uy.is_inf()) return ux.is_inf() ? x : y;
  const Term tx = to_term(ux, out), ty = to_term(uy, out);
  if (tx.magnitude == 0 && ty.magnitude == 0) {
    return static_cast<std::uint32_t>(ux.sign && uy.sign ? out.to_storage(out.sign_bit()) : 0);
  }
  // big: the nonzero term with the higher last bit (it is also the larger
  // whenever `small` loses bits below the guard bits).
  const bool x_big = ty.magnitude == 0 || (tx.magnitude != 0 && tx.lsb >= ty.lsb);
  const Term& big = x_big ? tx : ty;
  const Term& small = x_big ? ty : tx;
  constexpr int guard = 38;
  const int unit = big.lsb - guard;
  const auto b = static_cast<std::int64_t>(big.magnitude << guard);
  std::int64_t s = 0;
  bool sticky = false;
  if (small.magnitude != 0) {
    const int shift = unit - small.lsb;
    if (shift <= 0) {
      s = static_cast<std::int64_t>(small.magnitude << -shift);
    } else {
      s = shift >= 64 ? 0 : static_cast<std::int64_t>(small.magnitude >> shift);
      sticky = shift >= 64 || (small.magnitude & ((std::uint64_t{1} << shift) - 1)) != 0;
    }
  }
  // The exact sum is big +- (s + delta), 0 < delta < 1 unit when sticky:
  // adding, s + delta; subtracting, (s + 1) - (1 - delta).
  const bool subtract = big.negative != small.negative;
  std::int64_t total = subtract ? b - s - (sticky ? 1 : 0) : b + s;
  if (total == 0) return 0;  // exact cancellation: +0
  const bool negative = big.negative != (total < 0);
  if (total < 0) total = -total;
  Unpacked sum = fixed_point_value(total, unit);
  sum.sign = negative;
  sum.sticky = sticky;
  return static_cast<std::uint32_t>(round_to_format(sum, out, {}).bits);
}

// A block's exact sum when every bit is kept (exact alignment: mi100,
// ideal-fp32, exact): a two's-complement integer of Limbs 64-bit limbs in
// units of 2^base, base at or below the lowest bit of any term. 640 bits
// hold the products of two float32-range values (2^-298 .. 2^256), C and
// the carries of 2^40 terms.
struct WideSum {
  static constexpr int limbs = 10;
  std::uint64_t limb[limbs] = {};

  // Adds (or subtracts) magnitude * 2^position, magnitude < 2^63.
  FMTCHECK_HD void add(std::uint64_t magnitude, int position, bool negative) {
    const int at = position / 64, shift = position % 64;
    std::uint64_t part[2] = {magnitude << shift, shift == 0 ? 0 : magnitude >> (64 - shift)};
    std::uint64_t carry = 0;  // the borrow when subtracting
    for (int i = at; i < limbs; ++i) {
      const std::uint64_t x = i - at < 2 ? part[i - at] : 0;
      if (i - at >= 2 && carry == 0) break;
      const std::uint64_t before = limb[i];
      if (!negative) {
        limb[i] = before + x + carry;
        carry = (limb[i] < before || (carry != 0 && limb[i] == before)) ? 1 : 0;
      } else {
        limb[i] = before - x - carry;
        carry = (before < x || (carry != 0 && before == x)) ? 1 : 0;
      }
    }
  }

  // The sum times 2^base as an unpacked value (sticky below its top 64
  // bits); a zero when the sum is 0.
  [[nodiscard]] FMTCHECK_HD Unpacked value(int base) const {
    std::uint64_t m[limbs];
    const bool negative = (limb[limbs - 1] >> 63) != 0;
    std::uint64_t carry = 1;
    for (int i = 0; i < limbs; ++i) {  // |sum|: two's complement negated where negative
      m[i] = negative ? ~limb[i] + carry : limb[i];
      if (negative) carry = (carry != 0 && m[i] == 0) ? 1 : 0;
    }
    int top = limbs - 1;
    while (top >= 0 && m[top] == 0) --top;
    Unpacked x;
    if (top < 0) return x;  // zero
    const int lead = 63 - leading_zeros(m[top]);  // the highest set bit of limb `top`
    // The 64 bits from the leading one down, and whether any bit below them is set.
    std::uint64_t significand = m[top] << (63 - lead);
    if (lead < 63 && top > 0) significand |= m[top - 1] >> (lead + 1);
    bool sticky = top > 0 && lead < 63 ? (m[top - 1] << (63 - lead)) != 0 : top > 0 && m[top - 1] != 0;
    for (int i = top - 2; i >= 0 && !sticky; --i) sticky = m[i] != 0;
    x.kind = Unpacked::Kind::finite;
    x.sign = negative;
    x.significand = significand;
    x.exponent = base + top * 64 + lead;
    x.sticky = sticky;
    return x;
  }
};

// The tensor core of one GEMM: a model's arithmetic into its accumulator.
// A Line holds one operand line along k (a row of A, a column of B) and
// gives sig(k) and align(k) of its k-th element from a chunk's start.
struct GemmKernel {
  DotModel model;
  Encoding accumulator;
  BlockRounding rounding;  // to the accumulator
  int shift_up;  // G = F - m_a - m_b: a product's integer significand is aligned by << G >> (e_max - align)
  std::size_t block;
  DotStructure structure;
  Encoding input_a;  // the formats the lines were decoded from (CDNA2 flushes their subnormals)
  Encoding input_b;
  int exact_base = 0;  // exact alignment: the lowest bit any term of a block may have (WideSum's units)

  // The tensor core over one chunk of len elements, from a zero
  // accumulator: bits of the accumulator. FP8 mma.sync (fp16_groups) runs
  // each instruction as two fused blocks over lanes (k - k0) mod 4 in {0,1}
  // then {2,3}, and adds the running accumulator last, rounded to nearest.
  // A zero result may differ from the reference's in sign only, which
  // promotion into the +0 accumulator erases.
  template <class Line>
  [[nodiscard]] FMTCHECK_HD std::uint32_t chunk(const Line& a, const Line& b, std::size_t len) const {
    std::uint32_t c_bits = 0;  // +0
    for (std::size_t k0 = 0; k0 < len; k0 += block) {
      const std::size_t k1 = len < k0 + block ? len : k0 + block;
      switch (structure) {
        case DotStructure::late_c:
        case DotStructure::odd_even: c_bits = late_c_block(a, b, k0, k1, c_bits); break;
        case DotStructure::pairwise: c_bits = pairwise_block(a, b, k0, k1, c_bits); break;
        case DotStructure::fused:
          c_bits = model.fraction_bits == DotModel::exact_alignment ? exact_block(a, b, k0, k1, c_bits)
                                                                    : fused_block<4>(a, b, k0, k1, 0, c_bits);
          break;
        case DotStructure::fp16_groups: {
          const std::uint32_t first = fused_block<2>(a, b, k0, k1, 0, 0);
          const std::uint32_t second = fused_block<2>(a, b, k0, k1, 2, first);
          c_bits = add_two_nearest(second, c_bits, accumulator);
          break;
        }
      }
    }
    return c_bits;
  }

  // One fused block: C (bits of the accumulator) and the products k in
  // [k0, k1) whose lane (k - k0) mod 4 lies in [first, first + Lanes).
  template <int Lanes, class Line>
  [[nodiscard]] FMTCHECK_HD std::uint32_t fused_block(const Line& a, const Line& b, std::size_t k0, std::size_t k1,
                                                      int first, std::uint32_t c_bits) const {
    const auto each = [&](auto&& term) {
      if constexpr (Lanes == 4) {
        for (std::size_t k = k0; k < k1; ++k) term(k);
      } else {
        for (std::size_t q = k0 + static_cast<std::size_t>(first); q < k1; q += 4) {
          for (std::size_t r = 0; r < Lanes && q + r < k1; ++r) term(q + r);
        }
      }
    };
    bool special = false;
    const Operand c = decode_operand(accumulator, c_bits, special);
    // An infinite C (an fp16 accumulator that overflowed) decides the block:
    // the products here are finite.
    if (special) return c_bits;
    std::int32_t e_max = c.align;
    each([&](std::size_t k) {
      const std::int32_t e = a.align(k) + b.align(k);
      e_max = e > e_max ? e : e_max;
    });
    if (e_max < zero_align / 2) return 0;  // every term is zero: +0
    std::int64_t products = 0;
    each([&](std::size_t k) {
      const std::int64_t p = static_cast<std::int64_t>(a.sig(k)) * b.sig(k);
      const int gap = e_max - (a.align(k) + b.align(k));
      const int d = gap < 63 ? gap : 63;
      const std::int64_t t = ((p < 0 ? -p : p) << shift_up) >> d;  // truncation toward zero
      products += p < 0 ? -t : t;
    });
    return fused_finish(c, e_max, products);
  }

  // A fused block's last step: C (finite) truncated at 2^(e_max - F) like
  // the products, whose truncated sum is `products`, added to them, and the
  // sum rounded to the accumulator. e_max is the block's largest exponent,
  // C's included. fused_block and the CPU's vector kernel (fused_vector.cpp)
  // end here.
  [[nodiscard]] FMTCHECK_HD std::uint32_t fused_finish(const Operand& c, std::int32_t e_max,
                                                       std::int64_t products) const {
    const int unit = e_max - model.fraction_bits;
    std::int64_t sum = products;
    if (c.sig != 0) {
      const int shift = unit - (c.align - accumulator.mantissa_bits);
      const std::int64_t mag = c.sig < 0 ? -std::int64_t{c.sig} : std::int64_t{c.sig};
      const std::int64_t t = shift >= 63 ? 0 : shift > 0 ? mag >> shift : mag << -shift;
      sum += c.sig < 0 ? -t : t;
    }
    if (sum == 0) return 0;
    return static_cast<std::uint32_t>(
        round_to_format(fixed_point_value(sum, unit), rounding.target, rounding.policy).bits);
  }

  // One fused block keeping every bit (exact alignment): C and the products
  // k in [k0, k1) summed exactly, rounded once, as round_block does.
  template <class Line>
  [[nodiscard]] FMTCHECK_HD std::uint32_t exact_block(const Line& a, const Line& b, std::size_t k0, std::size_t k1,
                                                      std::uint32_t c_bits) const {
    bool special = false;
    const Operand c = decode_operand(accumulator, c_bits, special);
    if (special) return c_bits;  // an infinite C (an overflowed fp16 accumulator) decides the block
    WideSum sum;
    const auto add = [&](std::int64_t sig, int lsb) {
      if (sig != 0) sum.add(static_cast<std::uint64_t>(sig < 0 ? -sig : sig), lsb - exact_base, sig < 0);
    };
    add(c.sig, c.align - accumulator.mantissa_bits);
    for (std::size_t k = k0; k < k1; ++k) {
      add(static_cast<std::int64_t>(a.sig(k)) * b.sig(k),
          a.align(k) - input_a.mantissa_bits + b.align(k) - input_b.mantissa_bits);
    }
    const Unpacked x = sum.value(exact_base);
    if (x.is_zero()) return 0;
    return static_cast<std::uint32_t>(round_to_format(x, rounding.target, rounding.policy).bits);
  }

  // The products k in [k0, k1) of every `step`-th lane from k0 + first,
  // truncated at 2^(e_max - F) and summed without C (CDNA3).
  template <class Line>
  [[nodiscard]] FMTCHECK_HD PartialSum partial_sum(const Line& a, const Line& b, std::size_t k0, std::size_t k1,
                                                   std::size_t first, std::size_t step) const {
    PartialSum s;
    std::int32_t e_max = zero_align;
    for (std::size_t k = k0 + first; k < k1; k += step) {
      const std::int32_t e = a.align(k) + b.align(k);
      e_max = e > e_max ? e : e_max;
    }
    if (e_max < zero_align / 2) return s;  // no nonzero product
    s = {0, e_max - model.fraction_bits, e_max, true};
    for (std::size_t k = k0 + first; k < k1; k += step) {
      const std::int64_t p = static_cast<std::int64_t>(a.sig(k)) * b.sig(k);
      const int gap = e_max - (a.align(k) + b.align(k));
      const int d = gap < 63 ? gap : 63;
      const std::int64_t t = ((p < 0 ? -p : p) << shift_up) >> d;  // truncation toward zero
      s.sum += p < 0 ? -t : t;
    }
    return s;
  }

  // One CDNA2 instruction with C = c_bits (fp32) in float arithmetic, which
  // is IEEE's in the default environment (nearest even, no FTZ/DAZ; nvcc's
  // default too): subnormal operands, products, sums and C flushed to zero
  // of their sign, products exact or overflowing (fp16, bf16),
  // (p0 + p1) + (p2 + p3), then C + tree, each addition to nearest even; a
  // NaN is the canonical one.
  template <class Line>
  [[nodiscard]] FMTCHECK_HD std::uint32_t pairwise_block(const Line& a, const Line& b, std::size_t k0, std::size_t k1,
                                                         std::uint32_t c_bits) const {
    const auto flush = [](float x) { return fabsf(x) < 0x1p-126f ? copysignf(0.0f, x) : x; };
    const auto value = [](std::int32_t sig, std::int32_t align, const Encoding& f) {
      const float x = ldexpf(static_cast<float>(sig), align - f.mantissa_bits);  // exact
      return fabsf(x) < ldexpf(1.0f, f.min_exponent()) ? copysignf(0.0f, x) : x;
    };
    float level[max_pairwise_block] = {};  // missing slots of a short instruction: +0
    for (std::size_t k = k0; k < k1; ++k) {
      level[k - k0] = flush(value(a.sig(k), a.align(k), input_a) * value(b.sig(k), b.align(k), input_b));
    }
    for (std::size_t n = block; n > 1; n /= 2) {
      for (std::size_t i = 0; i < n / 2; ++i) level[i] = flush(level[2 * i] + level[2 * i + 1]);
    }
    // C is +0 or an earlier instruction's flushed D: never subnormal.
    const float d = flush(float_of_bits(c_bits) + level[0]);
    return d != d ? 0x7FFFFFFFu : bits_of_float(d);
  }

  // One CDNA3 instruction (late_c, odd_even) with C = c_bits (fp32): the
  // products' sum, then C added late (add_late_c).
  template <class Line>
  [[nodiscard]] FMTCHECK_HD std::uint32_t late_c_block(const Line& a, const Line& b, std::size_t k0, std::size_t k1,
                                                       std::uint32_t c_bits) const {
    if (unpack(encodings::fp32(), c_bits).is_inf()) return c_bits;  // an infinite C decides: the products are finite
    const PartialSum sum = structure == DotStructure::late_c
                               ? partial_sum(a, b, k0, k1, 0, 1)
                               : combine_odd_even(partial_sum(a, b, k0, k1, 0, 2), partial_sum(a, b, k0, k1, 1, 2));
    // The decoded lines keep no sign of zero: a zero D's sign is the one
    // thing this may get wrong (see chunk).
    return static_cast<std::uint32_t>(add_late_c(model, sum, c_bits, false).bits);
  }
};

// What surrounds the tensor core in gemm(): K cut into split_k slices of
// `slice` elements, each summed in fp32 from chunks of `chunk` elements
// (promotion), the slices added in order, and the epilogue
// D = fma(scale, total, C).
struct GemmPlan {
  std::size_t k = 0;
  std::size_t split_k = 1;
  std::size_t slice = 0;
  std::size_t chunk = 0;
  float scale = 1.0f;
};

// One output element: tensor_core(k0, k1) is the tensor core's result over
// [k0, k1) as a float.
template <class TensorCore>
FMTCHECK_HD float gemm_output(const GemmPlan& plan, const TensorCore& tensor_core, float c) {
  float total = 0;
  for (std::size_t s = 0; s < plan.split_k; ++s) {
    const std::size_t s0 = plan.k < s * plan.slice ? plan.k : s * plan.slice;
    const std::size_t s1 = plan.k < s0 + plan.slice ? plan.k : s0 + plan.slice;
    float acc = 0;
    // Promotion: a plain fp32 addition, never fused with the scale.
    for (std::size_t k0 = s0; k0 < s1; k0 += plan.chunk) {
      acc += tensor_core(k0, s1 < k0 + plan.chunk ? s1 : k0 + plan.chunk);
    }
    total = s == 0 ? acc : total + acc;
  }
  // The epilogue: alpha * acc + beta * C, one rounding.
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(plan.scale, total, c);
#else
  return std::fma(plan.scale, total, c);
#endif
}

// What gemm() (and the GPU's) run for one configuration.
struct GemmSetup {
  GemmKernel kernel;
  GemmPlan plan;
  bool fast = false;  // the kernel takes the model; otherwise every output goes to dot_product_add
  Format read_a, read_b;  // the formats the lines are decoded as (fp16 for FP8 mma.sync)
  int max_align = 0;  // a line with an element aligned above this goes to dot_product_add
};
// Checks what gemm() checks of `config` (throwing std::invalid_argument in
// its words) and plans a GEMM of depth k.
GemmSetup plan_gemm(const GemmConfig& config, std::size_t k);

}  // namespace fmtcheck::detail
