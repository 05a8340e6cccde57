// The GEMM kernel: the fused block of tensor_core.cpp (and the fused blocks
// of FP8 mma.sync, CDNA3's sums and CDNA2's fp32 additions) on pre-decoded
// operands, so that a 1024^3 FP8 GEMM takes seconds. It is an optimisation
// of dot_product_add, not a second definition: tests/tensor_core/test_gemm.cpp
// checks it bit for bit against dot_product_add, and it hands everything it
// does not cover (exact alignment, NaN and infinity, CDNA3 operands of 2^63
// or more) to dot_product_add.
#include "fmtcheck/tensor_core/gemm.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "fmtcheck/core/convert.hpp"
#include "fmtcheck/core/decode.hpp"
#include "fmtcheck/core/unpacked.hpp"
#include "tensor_core/parallel.hpp"
#include "tensor_core/rounding.hpp"
#include "tensor_core/terms.hpp"

namespace fmtcheck {
namespace {

// The longest CDNA2 instruction the fast kernel sums (the presets' L is 4).
constexpr std::size_t max_pairwise_block = 64;

// A zero operand's exponent: so low that a product with it never sets e_max
// and its (zero) term needs no special case.
constexpr std::int32_t zero_align = -(1 << 20);

// A finite value as hardware aligns it: the raw integer significand (signed,
// subnormals not normalised) and its exponent; value = sig * 2^(align - m).
struct Operand {
  std::int32_t sig = 0;
  std::int32_t align = zero_align;
};

// Decodes through unpack(), so the fast path reads exactly the values the
// reference reads. `special` is set for NaN and infinity.
Operand decode(const Format& f, std::uint64_t bits, bool& special) {
  const Unpacked x = unpack(f, bits);
  special = x.is_nan() || x.is_inf();
  if (!x.is_finite_nonzero()) return {};
  const int align = std::max<int>(x.exponent, f.min_exponent());
  const auto mag = static_cast<std::int32_t>(x.significand >> (63 - f.mantissa_bits + (align - x.exponent)));
  return {x.sign ? -mag : mag, align};
}

// One operand matrix, decoded line by line (rows of A, columns of B) so that
// the inner loop over k reads contiguous memory.
struct Lines {
  std::vector<std::int32_t> sig, align;
  std::vector<char> special;  // per line: some element is NaN or infinite
  std::vector<std::uint32_t> bits;  // the original bits, line by line, for the reference path
};

// Bits of `f`, read as values of `as` (f itself, or fp16 for FP8 mma.sync;
// exact either way). A line with an element aligned above max_align goes to
// the reference path too (CDNA3: its products may reach 2^128).
Lines decode_lines(const Format& f, const Format& as, std::span<const std::uint32_t> m, std::size_t lines,
                   std::size_t k, std::size_t line_stride, std::size_t k_stride, int max_align) {
  Lines out;
  out.sig.resize(lines * k);
  out.align.resize(lines * k);
  out.special.assign(lines, 0);
  out.bits.resize(lines * k);
  for (std::size_t l = 0; l < lines; ++l) {
    for (std::size_t i = 0; i < k; ++i) {
      const std::uint32_t bits = m[l * line_stride + i * k_stride];
      bool special = false;
      const Operand o = as == f ? decode(f, bits, special) : decode(as, convert_bits(bits, f, as).bits, special);
      out.sig[l * k + i] = o.sig;
      out.align[l * k + i] = o.align;
      out.bits[l * k + i] = bits;
      out.special[l] |= special || o.align > max_align ? 1 : 0;
    }
  }
  return out;
}

struct Kernel {
  const GemmConfig& config;
  detail::BlockRounding rounding;  // to config.accumulator
  int shift_up;  // G = F - m_a - m_b: a product's integer significand is aligned by << G >> (e_max - align)
  std::size_t block;
  bool groups;  // FP8 mma.sync: two fp16 blocks per instruction, C added last
  DotStructure structure;
  const Format& input_a;  // the formats the lines were decoded from (CDNA2 flushes their subnormals)
  const Format& input_b;

  // The tensor core over one chunk of k, from a zero accumulator: bits of
  // config.accumulator. FP8 mma.sync (fp16_groups) runs each instruction as
  // two fused blocks over lanes (k - k0) mod 4 in {0,1} then {2,3}, and adds
  // the running accumulator last, rounded to nearest. A zero result may
  // differ from the reference's in sign only, which promotion into the +0
  // accumulator erases.
  [[nodiscard]] std::uint32_t chunk(const std::int32_t* sa, const std::int32_t* ea, const std::int32_t* sb,
                                    const std::int32_t* eb, std::size_t len) const {
    std::uint32_t c_bits = 0;  // +0
    for (std::size_t k0 = 0; k0 < len; k0 += block) {
      const std::size_t k1 = std::min(len, k0 + block);
      if (structure == DotStructure::late_c || structure == DotStructure::odd_even) {
        c_bits = late_c_block(sa, ea, sb, eb, k0, k1, c_bits);
        continue;
      }
      if (structure == DotStructure::pairwise) {
        c_bits = pairwise_block(sa, ea, sb, eb, k0, k1, c_bits);
        continue;
      }
      if (!groups) {
        c_bits = fused_block<4>(sa, ea, sb, eb, k0, k1, 0, c_bits);
        continue;
      }
      const std::uint32_t first = fused_block<2>(sa, ea, sb, eb, k0, k1, 0, 0);
      const std::uint32_t second = fused_block<2>(sa, ea, sb, eb, k0, k1, 2, first);
      c_bits = static_cast<std::uint32_t>(detail::add_nearest(second, c_bits, config.accumulator).bits);
    }
    return c_bits;
  }

  // One fused block: C (bits of config.accumulator) and the products k in
  // [k0, k1) whose lane (k - k0) mod 4 lies in [first, first + Lanes).
  template <int Lanes>
  [[nodiscard]] std::uint32_t fused_block(const std::int32_t* sa, const std::int32_t* ea, const std::int32_t* sb,
                                          const std::int32_t* eb, std::size_t k0, std::size_t k1, int first,
                                          std::uint32_t c_bits) const {
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
    const Operand c = decode(config.accumulator, c_bits, special);
    // An infinite C (an fp16 accumulator that overflowed) decides the block:
    // the products here are finite.
    if (special) return c_bits;
    std::int32_t e_max = c.align;
    each([&](std::size_t k) { e_max = std::max(e_max, ea[k] + eb[k]); });
    if (e_max < zero_align / 2) return 0;  // every term is zero: +0
    const int unit = e_max - config.model.fraction_bits;
    std::int64_t sum = 0;
    if (c.sig != 0) {
      const int shift = unit - (c.align - config.accumulator.mantissa_bits);
      const std::int64_t mag = std::abs(c.sig);
      const std::int64_t t = shift >= 63 ? 0 : shift > 0 ? mag >> shift : mag << -shift;
      sum = c.sig < 0 ? -t : t;
    }
    each([&](std::size_t k) {
      const std::int64_t p = static_cast<std::int64_t>(sa[k]) * sb[k];
      const int d = std::min(e_max - (ea[k] + eb[k]), 63);
      const std::int64_t t = ((p < 0 ? -p : p) << shift_up) >> d;  // truncation toward zero
      sum += p < 0 ? -t : t;
    });
    if (sum == 0) return 0;
    return static_cast<std::uint32_t>(
        round_to_format(detail::fixed_point_value(sum, unit), rounding.target, rounding.policy).bits);
  }

  // The products k in [k0, k1) of every `step`-th lane from k0 + first,
  // truncated at 2^(e_max - F) and summed without C (CDNA3).
  [[nodiscard]] detail::PartialSum partial_sum(const std::int32_t* sa, const std::int32_t* ea, const std::int32_t* sb,
                                               const std::int32_t* eb, std::size_t k0, std::size_t k1,
                                               std::size_t first, std::size_t step) const {
    detail::PartialSum s;
    std::int32_t e_max = zero_align;
    for (std::size_t k = k0 + first; k < k1; k += step) e_max = std::max(e_max, ea[k] + eb[k]);
    if (e_max < zero_align / 2) return s;  // no nonzero product
    s = {0, e_max - config.model.fraction_bits, e_max, true};
    for (std::size_t k = k0 + first; k < k1; k += step) {
      const std::int64_t p = static_cast<std::int64_t>(sa[k]) * sb[k];
      const int d = std::min(e_max - (ea[k] + eb[k]), 63);
      const std::int64_t t = ((p < 0 ? -p : p) << shift_up) >> d;  // truncation toward zero
      s.sum += p < 0 ? -t : t;
    }
    return s;
  }

  // One CDNA2 instruction with C = c_bits (fp32) in float arithmetic, which
  // is IEEE's in the default environment (as the promotion below assumes):
  // subnormal operands, products, sums and C flushed to zero of their sign,
  // products exact or overflowing (fp16, bf16), (p0 + p1) + (p2 + p3), then
  // C + tree, each addition to nearest even; a NaN is the canonical one.
  [[nodiscard]] std::uint32_t pairwise_block(const std::int32_t* sa, const std::int32_t* ea, const std::int32_t* sb,
                                             const std::int32_t* eb, std::size_t k0, std::size_t k1,
                                             std::uint32_t c_bits) const {
    const auto flush = [](float x) { return std::fabs(x) < 0x1p-126f ? std::copysign(0.0f, x) : x; };
    const auto value = [](std::int32_t sig, std::int32_t align, const Format& f) {
      const float x = std::ldexp(static_cast<float>(sig), align - f.mantissa_bits);  // exact
      return std::fabs(x) < std::ldexp(1.0f, f.min_exponent()) ? std::copysign(0.0f, x) : x;
    };
    std::array<float, max_pairwise_block> level{};  // missing slots of a short instruction: +0
    for (std::size_t k = k0; k < k1; ++k) {
      level[k - k0] = flush(value(sa[k], ea[k], input_a) * value(sb[k], eb[k], input_b));
    }
    for (std::size_t n = block; n > 1; n /= 2) {
      for (std::size_t i = 0; i < n / 2; ++i) level[i] = flush(level[2 * i] + level[2 * i + 1]);
    }
    // C is +0 or an earlier instruction's flushed D: never subnormal.
    const float d = flush(std::bit_cast<float>(c_bits) + level[0]);
    return std::isnan(d) ? 0x7FFFFFFFu : std::bit_cast<std::uint32_t>(d);
  }

  // One CDNA3 instruction (late_c, odd_even) with C = c_bits (fp32): the
  // products' sum, then C added late (structures.cpp, add_late_c).
  [[nodiscard]] std::uint32_t late_c_block(const std::int32_t* sa, const std::int32_t* ea, const std::int32_t* sb,
                                           const std::int32_t* eb, std::size_t k0, std::size_t k1,
                                           std::uint32_t c_bits) const {
    bool special = false;
    decode(formats::fp32, c_bits, special);
    if (special) return c_bits;  // an infinite C decides: the products here are finite
    detail::PartialSum sum;
    if (structure == DotStructure::late_c) {
      sum = partial_sum(sa, ea, sb, eb, k0, k1, 0, 1);
    } else {
      sum = detail::combine_odd_even(partial_sum(sa, ea, sb, eb, k0, k1, 0, 2),
                                     partial_sum(sa, ea, sb, eb, k0, k1, 1, 2));
    }
    // The decoded lines keep no sign of zero: a zero D's sign is the one
    // thing this may get wrong (see chunk).
    return static_cast<std::uint32_t>(detail::add_late_c(config.model, sum, c_bits, false).bits);
  }
};

// The accumulator's bits as a float: fp16 widens exactly.
float as_float(const Format& accumulator, std::uint64_t bits) {
  if (accumulator == formats::fp32) return std::bit_cast<float>(static_cast<std::uint32_t>(bits));
  return static_cast<float>(to_double(accumulator, bits));
}

}  // namespace

void gemm(const GemmConfig& config, std::size_t m, std::size_t n, std::size_t k, std::span<const std::uint32_t> a,
          std::span<const std::uint32_t> b, std::span<const float> c, std::span<float> d) {
  if (a.size() != m * k || b.size() != k * n || c.size() != m * n || d.size() != m * n) {
    throw std::invalid_argument("gemm: matrix sizes do not match M, N, K");
  }
  if (config.split_k == 0) throw std::invalid_argument("gemm: split_k must be at least 1");
  if (!is_tensor_core_output(config.accumulator)) {
    throw std::invalid_argument("gemm: the accumulator must be fp32 or fp16, not " + config.accumulator.name);
  }
  const DotModel& model = config.model;
  const Format& input_b = config.input_b ? *config.input_b : config.input;
  if (config.accumulator != formats::fp32 && !model.writes_fp16) {
    throw std::invalid_argument("gemm: AMD matrix cores accumulate in fp32 only");
  }
  // FP8 mma.sync reads its operands as fp16 values (an FP8 subnormal aligns
  // as the fp16 normal it is).
  const bool groups = model.structure == DotStructure::fp16_groups;
  const Format& read_a = groups ? formats::fp16 : config.input;
  const Format& read_b = groups ? formats::fp16 : input_b;
  const int g = model.fraction_bits - read_a.mantissa_bits - read_b.mantissa_bits;
  // The fast kernel covers fused blocks, FP8 mma.sync and CDNA3; it needs
  // F >= m_a + m_b (true of every hardware preset) and terms that fit in 64
  // bits with their carries; the rest goes to the reference.
  const bool late_c = model.structure == DotStructure::late_c || model.structure == DotStructure::odd_even;
  // CDNA2 (pairwise) sums fp32 values of fp16 or bf16 products, exact in float.
  const bool pairwise = model.structure == DotStructure::pairwise && read_a.precision() + read_b.precision() <= 24 &&
                        model.block_size > 0 && model.block_size <= static_cast<int>(max_pairwise_block) &&
                        (model.block_size & (model.block_size - 1)) == 0;
  const bool fast = pairwise || ((model.structure == DotStructure::fused || groups || late_c) &&
                                 model.fraction_bits != DotModel::exact_alignment && g >= 0 && model.fraction_bits <= 40);
  const std::size_t block = model.block_size == DotModel::whole_k ? std::max<std::size_t>(k, 1)
                                                                  : static_cast<std::size_t>(model.block_size);
  const Kernel kernel{config, detail::block_rounding(model, config.accumulator), g, block, groups, model.structure,
                      read_a, read_b};
  // CDNA3 makes a product of 2^128 or more infinite: operands below 2^63
  // keep every product below 2^128 for the fast path.
  const int max_align = late_c ? 62 : std::numeric_limits<int>::max();
  const Lines rows = decode_lines(config.input, read_a, a, m, k, k, 1, max_align);
  const Lines cols = decode_lines(input_b, read_b, b, n, k, 1, n, max_align);
  const float scale = config.scale_a * config.scale_b;
  const std::size_t slice = (k + config.split_k - 1) / config.split_k;
  const std::size_t chunk = config.promote_every == 0 ? std::max<std::size_t>(slice, 1) : config.promote_every;

  // The tensor core's result for k in [k0, k1) of row i, column j.
  const auto tensor_core = [&](std::size_t i, std::size_t j, std::size_t k0, std::size_t k1) -> float {
    const std::size_t ai = i * k + k0, bj = j * k + k0;
    if (fast && !rows.special[i] && !cols.special[j]) {
      return as_float(config.accumulator,
                      kernel.chunk(&rows.sig[ai], &rows.align[ai], &cols.sig[bj], &cols.align[bj], k1 - k0));
    }
    const std::vector<std::uint64_t> av(rows.bits.begin() + ai, rows.bits.begin() + i * k + k1);
    const std::vector<std::uint64_t> bv(cols.bits.begin() + bj, cols.bits.begin() + j * k + k1);
    return as_float(config.accumulator,
                    dot_product_add(model, config.input, input_b, av, bv, 0, config.accumulator).bits);
  };

  const auto run_rows = [&](std::size_t i0, std::size_t i1) {
    for (std::size_t i = i0; i < i1; ++i) {
      for (std::size_t j = 0; j < n; ++j) {
        float total = 0;
        for (std::size_t s = 0; s < config.split_k; ++s) {
          const std::size_t s0 = std::min(k, s * slice), s1 = std::min(k, s0 + slice);
          float acc = 0;
          // Promotion: a plain fp32 addition, never fused with the scale.
          for (std::size_t k0 = s0; k0 < s1; k0 += chunk) acc += tensor_core(i, j, k0, std::min(s1, k0 + chunk));
          total = s == 0 ? acc : total + acc;
        }
        d[i * n + j] = std::fma(scale, total, c[i * n + j]);  // the epilogue: alpha * acc + beta * C
      }
    }
  };

  detail::parallel_rows(m, config.threads, run_rows);
}

}  // namespace fmtcheck
