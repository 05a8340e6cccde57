// The block-scaled GEMM's inner kernel (gemm_block_scaled, gemm.hpp), written
// once for the CPU and the GPU (cuda/src/emulator/gemm.cu): elements and
// scales decoded once to integer significands, then each instruction's terms
// (products times their block's scales, or 16-product groups summed exactly)
// truncated at 2^(e_max - F), summed and rounded toward zero to fp32, as
// block_scaled_instruction (tensor_core.cpp) does with its term lists. It is
// an optimisation of block_scaled_dot_product_add, not a second definition:
// tests/tensor_core/test_gemm_block_scaled.cpp checks it bit for bit, and
// lines with a NaN or an infinity (elements or scales) go to the reference.
#pragma once

#include <cstddef>
#include <cstdint>

#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/host_device.hpp"
#include "fmtcheck/core/round_to_format.hpp"
#include "fmtcheck/core/unpacked.hpp"
#include "fmtcheck/tensor_core/block_arithmetic.hpp"
#include "fmtcheck/tensor_core/gemm.hpp"
#include "fmtcheck/tensor_core/tensor_core.hpp"

namespace fmtcheck::detail {

// A decoded element or scale: value = sig * 2^lsb, aligned by `align` (the
// term's exponent as hardware reads it); sig 0 for zero.
struct ScaledOperand {
  std::int32_t sig = 0;
  std::int32_t lsb = 0;
  std::int32_t align = 0;
};

// Decodes through unpack() and to_term(), as decode_term does; `special` is
// set for NaN and infinity. Scales are unsigned (UE4M3 ignores its sign).
FMTCHECK_HD inline ScaledOperand decode_scaled_operand(const Encoding& f, std::uint64_t bits, bool scale,
                                                       bool& special) {
  const Unpacked x = unpack(f, bits);
  special = x.is_nan() || x.is_inf();
  const Term t = to_term(x, f);
  const auto mag = static_cast<std::int32_t>(t.magnitude);
  return {t.negative && !scale ? -mag : mag, t.lsb, t.align};
}

// The most groups one instruction may hold (kind::mxf4: K = 64, 4 groups).
inline constexpr std::size_t max_block_scaled_groups = 16;

struct BlockScaledKernel {
  int fraction_bits;       // F
  std::size_t group;       // 0: every scaled product is a term
  std::size_t scale_block;  // S: elements per scale
  BlockRounding rounding;  // to fp32, toward zero

  // One instruction over `len` elements of row a and row b (k-contiguous
  // lines of ScaledOperand from the instruction's start) and their scales
  // (one per scale_block elements), with C = c_bits (fp32): D's bits.
  template <class Line>
  [[nodiscard]] FMTCHECK_HD std::uint32_t instruction(const Line& a, const Line& b, const Line& sa, const Line& sb,
                                                      std::size_t len, std::uint32_t c_bits) const {
    const Unpacked cu = unpack(encodings::fp32(), c_bits);
    if (cu.is_inf()) return c_bits;  // an infinite C decides: the products here are finite
    const Term c = to_term(cu, encodings::fp32());
    // The groups' exact sums (group > 0), each a term when some product of it is nonzero.
    struct GroupTerm {
      std::int64_t sum;  // signed, in units of 2^lsb, before the scales
      int lsb;
      bool any;
    };
    GroupTerm groups[max_block_scaled_groups] = {};
    // As round_block: e_max over the nonzero terms; D = -0 when no term is
    // nonzero and every term (C, zero products of a zero scale) is -0.
    bool any = false, all_negative_zero = c.negative && c.magnitude == 0;
    int e_max = 0;
    const auto note = [&](bool negative, bool zero, int align) {
      all_negative_zero = all_negative_zero && negative && zero;
      if (zero) return;
      e_max = any ? (align > e_max ? align : e_max) : align;
      any = true;
    };
    if (c.magnitude != 0) note(c.negative, false, c.align);
    if (group == 0) {
      for (std::size_t k = 0; k < len; ++k) {
        if (a.sig(k) == 0 || b.sig(k) == 0) continue;  // a zero product is not a term
        const std::size_t j = k / scale_block;
        note((a.sig(k) < 0) != (b.sig(k) < 0), sa.sig(j) == 0 || sb.sig(j) == 0,
             a.align(k) + b.align(k) + sa.align(j) + sb.align(j));
      }
    } else {
      for (std::size_t g = 0; g * group < len; ++g) {
        GroupTerm& t = groups[g];
        for (std::size_t k = g * group; k < (g + 1) * group; ++k) {
          if (a.sig(k) != 0 && b.sig(k) != 0) {
            const int lsb = a.lsb(k) + b.lsb(k);
            t.lsb = t.any ? (lsb < t.lsb ? lsb : t.lsb) : lsb;
            t.any = true;
          }
        }
        if (!t.any) continue;
        for (std::size_t k = g * group; k < (g + 1) * group; ++k) {
          if (a.sig(k) != 0 && b.sig(k) != 0) {
            t.sum += (static_cast<std::int64_t>(a.sig(k)) * b.sig(k)) << (a.lsb(k) + b.lsb(k) - t.lsb);
          }
        }
        const std::size_t j = g * group / scale_block;
        note(t.sum < 0, t.sum == 0 || sa.sig(j) == 0 || sb.sig(j) == 0, sa.align(j) + sb.align(j));
      }
    }
    if (!any) return all_negative_zero ? 0x80000000u : 0u;
    const int unit = e_max - fraction_bits;
    std::int64_t sum = 0;  // the products' terms; C's is finish's
    const auto add = [&](bool negative, std::uint64_t magnitude, int lsb) {
      const std::int64_t m = truncated(magnitude, lsb, unit);
      sum += negative ? -m : m;
    };
    if (group == 0) {
      for (std::size_t k = 0; k < len; ++k) {
        const std::int64_t p = static_cast<std::int64_t>(a.sig(k)) * b.sig(k);
        if (p == 0) continue;
        const std::size_t j = k / scale_block;
        const auto s = static_cast<std::uint64_t>(sa.sig(j)) * static_cast<std::uint64_t>(sb.sig(j));
        add(p < 0, static_cast<std::uint64_t>(p < 0 ? -p : p) * s, a.lsb(k) + b.lsb(k) + sa.lsb(j) + sb.lsb(j));
      }
    } else {
      for (std::size_t g = 0; g * group < len; ++g) {
        const GroupTerm& t = groups[g];
        if (t.sum == 0) continue;
        const std::size_t j = g * group / scale_block;
        const auto s = static_cast<std::uint64_t>(sa.sig(j)) * static_cast<std::uint64_t>(sb.sig(j));
        add(t.sum < 0, static_cast<std::uint64_t>(t.sum < 0 ? -t.sum : t.sum) * s, t.lsb + sa.lsb(j) + sb.lsb(j));
      }
    }
    return finish(c, e_max, sum);
  }

  // An instruction's last step, once some term is nonzero: C's term
  // truncated at 2^(e_max - F) like the products, whose truncated sum is
  // `products`, added to them, and the sum rounded toward zero to fp32.
  // e_max is the largest exponent of the nonzero terms, C's included.
  // instruction() and the CPU's vector kernel (fused_vector.cpp) end here.
  [[nodiscard]] FMTCHECK_HD std::uint32_t finish(const Term& c, int e_max, std::int64_t products) const {
    const int unit = e_max - fraction_bits;
    const std::int64_t t = truncated(c.magnitude, c.lsb, unit);
    const std::int64_t sum = products + (c.negative ? -t : t);
    if (sum == 0) return 0;  // cancellation: +0
    return static_cast<std::uint32_t>(
        round_to_format(fixed_point_value(sum, unit), rounding.target, rounding.policy).bits);
  }

  // magnitude * 2^lsb truncated toward zero at 2^unit, in units of 2^unit.
  [[nodiscard]] FMTCHECK_HD static std::int64_t truncated(std::uint64_t magnitude, int lsb, int unit) {
    const int shift = unit - lsb;
    if (magnitude == 0 || shift >= 64) return 0;
    return static_cast<std::int64_t>(shift > 0 ? magnitude >> shift : magnitude << -shift);
  }
};

// gemm_block_scaled's kernel for `config`, and whether it takes it (F of at
// most 38, at most max_block_scaled_groups groups per instruction).
BlockScaledKernel plan_block_scaled(const BlockScaledGemmConfig& config);
bool kernel_takes(const BlockScaledGemmConfig& config);
// What gemm_block_scaled checks of `config` for depth k, but the matrices'
// sizes: std::invalid_argument in its words.
void check_block_scaled_gemm(const BlockScaledGemmConfig& config, std::size_t k);

}  // namespace fmtcheck::detail
