// The block-scaled GEMM: elements and scales decoded once, each output's
// chain of instructions run by block_scaled_kernel.hpp's kernel (shared with
// the GPU); a row of A or B holding a NaN or an infinity (element or scale)
// runs block_scaled_dot_product_add's own instruction routine
// (detail::block_scaled_instruction) instead.
#include <algorithm>
#include <bit>
#include <optional>
#include <stdexcept>
#include <vector>

#include "fmtcheck/tensor_core/block_scaled_kernel.hpp"
#include "fmtcheck/tensor_core/gemm.hpp"
#include "core/parallel.hpp"
#include "fmtcheck/tensor_core/gemm_kernel.hpp"
#include "tensor_core/fused_vector.hpp"
#include "tensor_core/parallel.hpp"
#include "tensor_core/terms.hpp"

namespace fmtcheck {
namespace {

void check_sizes(const BlockScaledGemmConfig& config, std::size_t m, std::size_t n, std::size_t k, std::size_t a,
                 std::size_t b, std::size_t scale_a, std::size_t scale_b, std::size_t d) {
  detail::check_block_scaled_gemm(config, k);
  const std::size_t s = config.scale_block;
  if (a != m * k || b != n * k || scale_a != m * (k / s) || scale_b != n * (k / s) || d != m * n) {
    throw std::invalid_argument("gemm_block_scaled: matrix or scale sizes do not match M, N, K");
  }
}

// Runs decode(e, special) for every element of `count`, lines of `per_line`
// elements, on several threads where there are enough elements, and flags
// the lines where some element is NaN or infinite.
template <class Decode>
void decode_elements(std::size_t count, std::size_t per_line, std::vector<char>& special_lines, const Decode& decode) {
  constexpr std::size_t chunk = 4096;
  std::vector<char> special(count, 0);
  detail::run_parallel((count + chunk - 1) / chunk, detail::threads_for(count, std::uint64_t{1} << 16),
                       [&](std::uint64_t c) {
    for (std::size_t e = c * chunk; e < std::min(count, (c + 1) * chunk); ++e) {
      bool s = false;
      decode(e, s);
      special[e] = s ? 1 : 0;
    }
  });
  for (std::size_t e = 0; e < count; ++e) {
    if (special[e] != 0) special_lines[e / per_line] = 1;
  }
}

// Elements or scales as the vector kernel reads them: decode_operand's
// significand and exponent, padded for its whole-vector loads.
struct VectorOperands {
  std::vector<std::int32_t> sig, align;
};
template <class Bits>
VectorOperands vector_operands(std::span<const Bits> bits, const Format& f, std::size_t per_line,
                               std::vector<char>& special_lines) {
  const std::size_t size = bits.size() + detail::fused_vector_padding;
  VectorOperands out{std::vector<std::int32_t>(size), std::vector<std::int32_t>(size)};
  decode_elements(bits.size(), per_line, special_lines, [&](std::size_t e, bool& special) {
    const detail::Operand o = detail::decode_operand(f, bits[e], special);
    out.sig[e] = o.sig;
    out.align[e] = o.align;
  });
  return out;
}

// Elements or scales as the scalar kernel reads them.
template <class Bits>
std::vector<detail::ScaledOperand> scalar_operands(std::span<const Bits> bits, const Format& f, bool is_scale,
                                                   std::size_t per_line, std::vector<char>& special_lines) {
  std::vector<detail::ScaledOperand> out(bits.size());
  decode_elements(bits.size(), per_line, special_lines, [&](std::size_t e, bool& special) {
    out[e] = detail::decode_scaled_operand(f, bits[e], is_scale, special);
  });
  return out;
}

// The reference's operands (block_scaled_instruction's), line by line, for
// the lines `special` flags, or for every line with `all`.
struct ReferenceLines {
  std::vector<std::vector<detail::Decoded>> elements, scales;
};
ReferenceLines reference_lines(const BlockScaledGemmConfig& config, std::span<const std::uint32_t> bits,
                               std::span<const std::uint8_t> scale_bits, std::size_t k,
                               const std::vector<char>& special, bool all) {
  const std::size_t lines = special.size(), scales = k / config.scale_block;
  ReferenceLines out{std::vector<std::vector<detail::Decoded>>(lines), std::vector<std::vector<detail::Decoded>>(lines)};
  for (std::size_t l = 0; l < lines; ++l) {
    if (!all && special[l] == 0) continue;
    for (std::size_t e = 0; e < k; ++e) out.elements[l].push_back(detail::decode_term(config.input, bits[l * k + e]));
    for (std::size_t e = 0; e < scales; ++e) {
      out.scales[l].push_back(detail::decode_scale(config.scale_format, scale_bits[l * scales + e]));
    }
  }
  return out;
}

// A decoded line from an instruction's start, contiguous along k.
struct ContiguousScaled {
  const detail::ScaledOperand* p;
  [[nodiscard]] std::int32_t sig(std::size_t k) const { return p[k].sig; }
  [[nodiscard]] std::int32_t lsb(std::size_t k) const { return p[k].lsb; }
  [[nodiscard]] std::int32_t align(std::size_t k) const { return p[k].align; }
};

}  // namespace

namespace detail {

BlockScaledKernel plan_block_scaled(const BlockScaledGemmConfig& config) {
  DotModel block;
  block.fraction_bits = config.model.fraction_bits;  // rounded toward zero to fp32, as the instruction
  return {config.model.fraction_bits, config.model.group, config.scale_block, block_rounding(block, formats::fp32)};
}

void check_block_scaled_gemm(const BlockScaledGemmConfig& config, std::size_t k) {
  const std::size_t s = config.scale_block, kk = config.instruction_k;
  if (s == 0 || kk == 0 || kk % s != 0 || k % kk != 0) {
    throw std::invalid_argument("gemm_block_scaled: K must be a multiple of instruction_k, and it of scale_block");
  }
  check_block_scaled(config.model, config.input, config.scale_format, config.scale_block, "gemm_block_scaled");
}

bool kernel_takes(const BlockScaledGemmConfig& config) {
  return config.model.fraction_bits <= 38 &&
         (config.model.group == 0 || config.instruction_k / config.model.group <= max_block_scaled_groups);
}

}  // namespace detail

void gemm_block_scaled(const BlockScaledGemmConfig& config, std::size_t m, std::size_t n, std::size_t k,
                       std::span<const std::uint32_t> a, std::span<const std::uint32_t> b,
                       std::span<const std::uint8_t> scale_a, std::span<const std::uint8_t> scale_b,
                       std::span<float> d) {
  check_sizes(config, m, n, k, a.size(), b.size(), scale_a.size(), scale_b.size(), d.size());
  const std::size_t kk = config.instruction_k, scales = k / config.scale_block, per = kk / config.scale_block;
  const detail::BlockScaledKernel kernel = detail::plan_block_scaled(config);
  // Which kernel takes the lines without a NaN or an infinity: the vector
  // kernel (single terms, E8M0 scales: fused_vector.hpp), several columns of
  // a row at once; else the scalar one; else none (every output runs the
  // reference).
  const bool fast = detail::kernel_takes(config);
  const std::optional<int> shift_up =
      fast ? detail::block_scaled_vector_shift(kernel, config.input, config.scale_format) : std::nullopt;
  std::vector<char> special_a(m, 0), special_b(n, 0);
  VectorOperands va, vb, vsa, vsb;
  std::vector<detail::ScaledOperand> ka, kb, ksa, ksb;
  if (shift_up) {
    va = vector_operands(a, config.input, k, special_a);
    vb = vector_operands(b, config.input, k, special_b);
    vsa = vector_operands(scale_a, config.scale_format, scales, special_a);
    vsb = vector_operands(scale_b, config.scale_format, scales, special_b);
  } else if (fast) {
    ka = scalar_operands(a, config.input, false, k, special_a);
    kb = scalar_operands(b, config.input, false, k, special_b);
    ksa = scalar_operands(scale_a, config.scale_format, true, scales, special_a);
    ksb = scalar_operands(scale_b, config.scale_format, true, scales, special_b);
  } else {
    special_a.assign(m, 1);
    special_b.assign(n, 1);
  }
  // The reference's operands, decoded only for the lines it runs: those
  // with a special, and all of A (or B) when some line of B (or A) has one.
  const bool any_a = std::find(special_a.begin(), special_a.end(), 1) != special_a.end();
  const bool any_b = std::find(special_b.begin(), special_b.end(), 1) != special_b.end();
  const ReferenceLines ref_a = reference_lines(config, a, scale_a, k, special_a, any_b);
  const ReferenceLines ref_b = reference_lines(config, b, scale_b, k, special_b, any_a);

  const auto run_outputs = [&](std::size_t o0, std::size_t o1) {
    detail::BlockScaledScratch scratch;
    // Instruction q of output (i, j) from C = c alone: the scalar kernel, or
    // for a line with a NaN or an infinity the reference.
    const auto instruction = [&](std::size_t i, std::size_t j, std::size_t q, std::uint32_t c) -> std::uint32_t {
      if (!special_a[i] && !special_b[j]) {
        return kernel.instruction(ContiguousScaled{&ka[i * k + q * kk]}, ContiguousScaled{&kb[j * k + q * kk]},
                                  ContiguousScaled{&ksa[i * scales + q * per]},
                                  ContiguousScaled{&ksb[j * scales + q * per]}, kk, c);
      }
      const std::span<const detail::Decoded> ae(ref_a.elements[i]), be(ref_b.elements[j]);
      const std::span<const detail::Decoded> as(ref_a.scales[i]), bs(ref_b.scales[j]);
      return static_cast<std::uint32_t>(detail::block_scaled_instruction(config.model, ae.subspan(q * kk, kk),
                                                                         be.subspan(q * kk, kk), as.subspan(q * per, per),
                                                                         bs.subspan(q * per, per), c, scratch)
                                            .bits);
    };
    // Outputs in groups of up to fused_vector_columns columns of one row,
    // each column's chain of instructions (each one's D the next one's C).
    constexpr std::size_t most = detail::fused_vector_columns;
    const auto takes = [&](std::size_t i, std::size_t j) { return shift_up && !special_a[i] && !special_b[j]; };
    detail::for_output_groups(o0, o1, n, takes, [&](const detail::OutputGroup& g) {
      std::uint32_t c[most] = {};  // +0
      for (std::size_t q = 0; q < k / kk; ++q) {
        g.each_alone([&](std::size_t col) { c[col] = instruction(g.i, g.j0 + col, q, c[col]); });
        if (g.count == 0) continue;
        const std::size_t e0 = g.i * k + q * kk, s0 = g.i * scales + q * per;
        detail::FusedLines elements{&va.sig[e0], &va.align[e0], {}, {}};
        detail::FusedLines scale_lines{&vsa.sig[s0], &vsa.align[s0], {}, {}};
        std::uint32_t bits[most];
        for (std::size_t t = 0; t < g.count; ++t) {
          const std::size_t j = g.j0 + g.together[t];
          elements.b_sig[t] = &vb.sig[j * k + q * kk];
          elements.b_align[t] = &vb.align[j * k + q * kk];
          scale_lines.b_sig[t] = &vsb.sig[j * scales + q * per];
          scale_lines.b_align[t] = &vsb.align[j * scales + q * per];
          bits[t] = c[g.together[t]];
        }
        detail::block_scaled_vector(kernel, *shift_up, elements, scale_lines, g.count, kk, bits);
        for (std::size_t t = 0; t < g.count; ++t) c[g.together[t]] = bits[t];
      }
      for (std::size_t col = 0; col < g.size; ++col) d[g.i * n + g.j0 + col] = std::bit_cast<float>(c[col]);
    });
  };
  detail::parallel_outputs(m, n, k, config.threads, run_outputs);
}

}  // namespace fmtcheck
