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

template <class Bits, class Decode>
std::vector<detail::Decoded> decode_all(std::span<const Bits> bits, const Decode& decode) {
  std::vector<detail::Decoded> out;
  out.reserve(bits.size());
  for (const Bits x : bits) out.push_back(decode(x));
  return out;
}

void check_sizes(const BlockScaledGemmConfig& config, std::size_t m, std::size_t n, std::size_t k, std::size_t a,
                 std::size_t b, std::size_t scale_a, std::size_t scale_b, std::size_t d) {
  detail::check_block_scaled_gemm(config, k);
  const std::size_t s = config.scale_block;
  if (a != m * k || b != n * k || scale_a != m * (k / s) || scale_b != n * (k / s) || d != m * n) {
    throw std::invalid_argument("gemm_block_scaled: matrix or scale sizes do not match M, N, K");
  }
}

// Elements or scales as the vector kernel reads them: decode_operand's
// significand and exponent.
struct VectorOperands {
  std::vector<std::int32_t> sig, align;
};
template <class Bits>
VectorOperands vector_operands(std::span<const Bits> bits, const Format& f) {
  VectorOperands out{std::vector<std::int32_t>(bits.size()), std::vector<std::int32_t>(bits.size())};
  constexpr std::size_t chunk = 4096;
  detail::run_parallel((bits.size() + chunk - 1) / chunk, detail::threads_for(bits.size(), std::uint64_t{1} << 16),
                       [&](std::uint64_t c) {
    for (std::size_t e = c * chunk; e < std::min(bits.size(), (c + 1) * chunk); ++e) {
      bool special = false;  // lines with specials are flagged by the scalar decode
      const detail::Operand o = detail::decode_operand(f, bits[e], special);
      out.sig[e] = o.sig;
      out.align[e] = o.align;
    }
  });
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
  const auto element = [&](std::uint32_t x) { return detail::decode_term(config.input, x); };
  const auto scale = [&](std::uint8_t x) { return detail::decode_scale(config.scale_format, x); };
  const std::vector<detail::Decoded> rows = decode_all(a, element), cols = decode_all(b, element);
  const std::vector<detail::Decoded> rows_scale = decode_all(scale_a, scale), cols_scale = decode_all(scale_b, scale);
  const std::size_t kk = config.instruction_k, scales = k / config.scale_block, per = kk / config.scale_block;
  // The kernel's operands, and the lines (rows of A, of B) it cannot take.
  const bool fast = detail::kernel_takes(config);
  const auto kernel_lines = [&](const auto& bits, const Format& f, bool is_scale, std::size_t lines,
                                std::vector<detail::ScaledOperand>& out, std::vector<char>& special) {
    const std::size_t per_line = bits.size() / std::max<std::size_t>(lines, 1);
    out.resize(bits.size());
    for (std::size_t e = 0; e < bits.size(); ++e) {
      bool s = false;
      out[e] = detail::decode_scaled_operand(f, bits[e], is_scale, s);
      if (s) special[e / per_line] = 1;
    }
  };
  std::vector<detail::ScaledOperand> ka, kb, ksa, ksb;
  std::vector<char> special_a(m, 0), special_b(n, 0);
  if (fast) {
    kernel_lines(a, config.input, false, m, ka, special_a);
    kernel_lines(b, config.input, false, n, kb, special_b);
    kernel_lines(scale_a, config.scale_format, true, m, ksa, special_a);
    kernel_lines(scale_b, config.scale_format, true, n, ksb, special_b);
  }
  const detail::BlockScaledKernel kernel = detail::plan_block_scaled(config);
  // Instructions whose scaled products are each a term run in vector lanes,
  // several columns of a row at once (fused_vector.hpp).
  const std::optional<int> shift_up =
      fast ? detail::block_scaled_vector_shift(kernel, config.input, config.scale_format) : std::nullopt;
  VectorOperands va, vb, vsa, vsb;
  if (shift_up) {
    va = vector_operands(a, config.input);
    vb = vector_operands(b, config.input);
    vsa = vector_operands(scale_a, config.scale_format);
    vsb = vector_operands(scale_b, config.scale_format);
  }

  const auto run_outputs = [&](std::size_t o0, std::size_t o1) {
    detail::BlockScaledScratch scratch;
    const std::span<const detail::Decoded> av(rows), bv(cols), sa(rows_scale), sb(cols_scale);
    // Instruction q of output (i, j) from C = c alone: the scalar kernel, or
    // for a line with a NaN or an infinity the reference.
    const auto instruction = [&](std::size_t i, std::size_t j, std::size_t q, std::uint32_t c) -> std::uint32_t {
      if (fast && !special_a[i] && !special_b[j]) {
        return kernel.instruction(ContiguousScaled{&ka[i * k + q * kk]}, ContiguousScaled{&kb[j * k + q * kk]},
                                  ContiguousScaled{&ksa[i * scales + q * per]},
                                  ContiguousScaled{&ksb[j * scales + q * per]}, kk, c);
      }
      return static_cast<std::uint32_t>(
          detail::block_scaled_instruction(config.model, av.subspan(i * k + q * kk, kk), bv.subspan(j * k + q * kk, kk),
                                           sa.subspan(i * scales + q * per, per), sb.subspan(j * scales + q * per, per),
                                           c, scratch)
              .bits);
    };
    // Outputs in groups of up to fused_vector_columns columns of one row,
    // each column's chain of instructions (each one's D the next one's C).
    constexpr std::size_t most = detail::fused_vector_columns;
    for (std::size_t o = o0; o < o1;) {
      const std::size_t i = o / n, j0 = o % n;
      const std::size_t group = std::min({most, o1 - o, n - j0});
      std::size_t together[most];  // the group's columns the vector kernel takes
      std::size_t count = 0;
      for (std::size_t col = 0; col < group; ++col) {
        if (shift_up && !special_a[i] && !special_b[j0 + col]) together[count++] = col;
      }
      std::uint32_t c[most] = {};  // +0
      for (std::size_t q = 0; q < k / kk; ++q) {
        for (std::size_t col = 0, t = 0; col < group; ++col) {
          if (t < count && together[t] == col) {
            ++t;
          } else {
            c[col] = instruction(i, j0 + col, q, c[col]);
          }
        }
        if (count == 0) continue;
        const std::size_t e0 = q * kk, s0 = q * per;
        detail::FusedLines elements{&va.sig[i * k + e0], &va.align[i * k + e0], {}, {}};
        detail::FusedLines scale_lines{&vsa.sig[i * scales + s0], &vsa.align[i * scales + s0], {}, {}};
        std::uint32_t bits[most];
        for (std::size_t t = 0; t < count; ++t) {
          const std::size_t j = j0 + together[t];
          elements.b_sig[t] = &vb.sig[j * k + e0];
          elements.b_align[t] = &vb.align[j * k + e0];
          scale_lines.b_sig[t] = &vsb.sig[j * scales + s0];
          scale_lines.b_align[t] = &vsb.align[j * scales + s0];
          bits[t] = c[together[t]];
        }
        const unsigned undecided = detail::block_scaled_vector(kernel, *shift_up, elements, scale_lines, count, kk, bits);
        for (std::size_t t = 0; t < count; ++t) {
          const std::size_t col = together[t];
          c[col] = (undecided >> t & 1u) != 0 ? instruction(i, j0 + col, q, c[col]) : bits[t];
        }
      }
      for (std::size_t col = 0; col < group; ++col) d[i * n + j0 + col] = std::bit_cast<float>(c[col]);
      o += group;
    }
  };
  detail::parallel_outputs(m, n, k, config.threads, run_outputs);
}

}  // namespace fmtcheck
