// The block-scaled GEMM: elements and scales decoded once, each output's
// chain of instructions run by block_scaled_kernel.hpp's kernel (shared with
// the GPU); a row of A or B holding a NaN or an infinity (element or scale)
// runs block_scaled_dot_product_add's own instruction routine
// (detail::block_scaled_instruction) instead.
#include <algorithm>
#include <bit>
#include <stdexcept>
#include <vector>

#include "fmtcheck/tensor_core/block_scaled_kernel.hpp"
#include "fmtcheck/tensor_core/gemm.hpp"
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

  const auto run_outputs = [&](std::size_t o0, std::size_t o1) {
    detail::BlockScaledScratch scratch;
    const std::span<const detail::Decoded> av(rows), bv(cols), sa(rows_scale), sb(cols_scale);
    for (std::size_t o = o0; o < o1; ++o) {
      const std::size_t i = o / n, j = o % n;
      std::uint64_t c = 0;  // +0; each instruction's D is the next one's C
      for (std::size_t q = 0; q < k / kk; ++q) {
        if (fast && !special_a[i] && !special_b[j]) {
          c = kernel.instruction(ContiguousScaled{&ka[i * k + q * kk]}, ContiguousScaled{&kb[j * k + q * kk]},
                                 ContiguousScaled{&ksa[i * scales + q * per]},
                                 ContiguousScaled{&ksb[j * scales + q * per]}, kk, static_cast<std::uint32_t>(c));
          continue;
        }
        c = detail::block_scaled_instruction(config.model, av.subspan(i * k + q * kk, kk),
                                             bv.subspan(j * k + q * kk, kk), sa.subspan(i * scales + q * per, per),
                                             sb.subspan(j * scales + q * per, per), c, scratch)
                .bits;
      }
      d[i * n + j] = std::bit_cast<float>(static_cast<std::uint32_t>(c));
    }
  };
  detail::parallel_outputs(m, n, k, config.threads, run_outputs);
}

}  // namespace fmtcheck
