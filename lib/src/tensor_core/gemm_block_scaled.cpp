// The block-scaled GEMM: block_scaled_dot_product_add's own instruction
// routine (detail::block_scaled_instruction) run on operands decoded once.
// Calling block_scaled_dot_product_add per output and instruction would
// unpack every element once per output that reads it, O(m·n·k) unpacks
// instead of O((m+n)·k), and allocate per instruction.
#include <bit>
#include <stdexcept>
#include <vector>

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
  const std::size_t s = config.scale_block, kk = config.instruction_k;
  if (s == 0 || kk == 0 || kk % s != 0 || k % kk != 0) {
    throw std::invalid_argument("gemm_block_scaled: K must be a multiple of instruction_k, and it of scale_block");
  }
  if (a != m * k || b != n * k || scale_a != m * (k / s) || scale_b != n * (k / s) || d != m * n) {
    throw std::invalid_argument("gemm_block_scaled: matrix or scale sizes do not match M, N, K");
  }
}

}  // namespace

void gemm_block_scaled(const BlockScaledGemmConfig& config, std::size_t m, std::size_t n, std::size_t k,
                       std::span<const std::uint32_t> a, std::span<const std::uint32_t> b,
                       std::span<const std::uint8_t> scale_a, std::span<const std::uint8_t> scale_b,
                       std::span<float> d) {
  check_sizes(config, m, n, k, a.size(), b.size(), scale_a.size(), scale_b.size(), d.size());
  detail::check_block_scaled(config.model, config.input, config.scale_format, config.scale_block, "gemm_block_scaled");
  const auto element = [&](std::uint32_t x) { return detail::decode_term(config.input, x); };
  const auto scale = [&](std::uint8_t x) { return detail::decode_scale(config.scale_format, x); };
  const std::vector<detail::Decoded> rows = decode_all(a, element), cols = decode_all(b, element);
  const std::vector<detail::Decoded> rows_scale = decode_all(scale_a, scale), cols_scale = decode_all(scale_b, scale);
  const std::size_t kk = config.instruction_k, scales = k / config.scale_block, per = kk / config.scale_block;

  const auto run_rows = [&](std::size_t i0, std::size_t i1) {
    detail::BlockScaledScratch scratch;
    const std::span<const detail::Decoded> av(rows), bv(cols), sa(rows_scale), sb(cols_scale);
    for (std::size_t i = i0; i < i1; ++i) {
      for (std::size_t j = 0; j < n; ++j) {
        std::uint64_t c = 0;  // +0; each instruction's D is the next one's C
        for (std::size_t q = 0; q < k / kk; ++q) {
          c = detail::block_scaled_instruction(config.model, av.subspan(i * k + q * kk, kk),
                                               bv.subspan(j * k + q * kk, kk), sa.subspan(i * scales + q * per, per),
                                               sb.subspan(j * scales + q * per, per), c, scratch)
                  .bits;
        }
        d[i * n + j] = std::bit_cast<float>(static_cast<std::uint32_t>(c));
      }
    }
  };
  detail::parallel_rows(m, config.threads, run_rows);
}

}  // namespace fmtcheck
