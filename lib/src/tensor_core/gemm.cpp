// The GEMM kernel: the fused block of tensor_core.cpp on pre-decoded
// operands, so that a 1024^3 FP8 GEMM takes seconds. It is an optimisation
// of dot_product_add, not a second definition: tests/tensor_core/test_gemm.cpp
// checks it bit for bit against dot_product_add, and it hands everything it
// does not cover (exact alignment, NaN and infinity) to dot_product_add.
#include "fmtcheck/tensor_core/gemm.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>
#include <thread>
#include <vector>

#include "fmtcheck/core/decode.hpp"
#include "fmtcheck/core/unpacked.hpp"
#include "tensor_core/rounding.hpp"

namespace fmtcheck {
namespace {

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

Lines decode_lines(const Format& f, std::span<const std::uint32_t> m, std::size_t lines, std::size_t k,
                   std::size_t line_stride, std::size_t k_stride) {
  Lines out;
  out.sig.resize(lines * k);
  out.align.resize(lines * k);
  out.special.assign(lines, 0);
  out.bits.resize(lines * k);
  for (std::size_t l = 0; l < lines; ++l) {
    for (std::size_t i = 0; i < k; ++i) {
      const std::uint32_t bits = m[l * line_stride + i * k_stride];
      bool special = false;
      const Operand o = decode(f, bits, special);
      out.sig[l * k + i] = o.sig;
      out.align[l * k + i] = o.align;
      out.bits[l * k + i] = bits;
      out.special[l] |= special ? 1 : 0;
    }
  }
  return out;
}

struct Kernel {
  const GemmConfig& config;
  detail::BlockRounding rounding;  // to config.accumulator
  int shift_up;  // G = F - m_a - m_b: a product's integer significand is aligned by << G >> (e_max - align)
  std::size_t block;

  // The tensor core over one chunk of k, from a zero accumulator: bits of
  // config.accumulator.
  [[nodiscard]] std::uint32_t chunk(const std::int32_t* sa, const std::int32_t* ea, const std::int32_t* sb,
                                    const std::int32_t* eb, std::size_t len) const {
    const int f = config.model.fraction_bits;
    const int c_m = config.accumulator.mantissa_bits;
    Operand c;               // +0: a block of zeros after it gives +0 again
    std::uint32_t c_bits = 0;
    for (std::size_t k0 = 0; k0 < len; k0 += block) {
      const std::size_t k1 = std::min(len, k0 + block);
      std::int32_t e_max = c.align;
      for (std::size_t k = k0; k < k1; ++k) e_max = std::max(e_max, ea[k] + eb[k]);
      if (e_max < zero_align / 2) {  // every term is zero
        c = {};
        c_bits = 0;
        continue;
      }
      const int unit = e_max - f;
      std::int64_t sum = 0;
      if (c.sig != 0) {
        const int shift = unit - (c.align - c_m);
        const std::int64_t mag = std::abs(c.sig);
        const std::int64_t t = shift >= 63 ? 0 : shift > 0 ? mag >> shift : mag << -shift;
        sum = c.sig < 0 ? -t : t;
      }
      for (std::size_t k = k0; k < k1; ++k) {
        const std::int64_t p = static_cast<std::int64_t>(sa[k]) * sb[k];
        const int d = std::min(e_max - (ea[k] + eb[k]), 63);
        const std::int64_t t = ((p < 0 ? -p : p) << shift_up) >> d;  // truncation toward zero
        sum += p < 0 ? -t : t;
      }
      c_bits = sum == 0 ? 0u
                        : static_cast<std::uint32_t>(
                              round_to_format(detail::fixed_point_value(sum, unit), rounding.target, rounding.policy).bits);
      bool special = false;
      c = decode(config.accumulator, c_bits, special);
      // An overflow to infinity (fp16 accumulators) stays: later blocks add finite terms.
      if (special) return c_bits;
    }
    return c_bits;
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
  const int g = model.fraction_bits - config.input.mantissa_bits - input_b.mantissa_bits;
  // The fast block is one fused block; it needs F >= m_a + m_b (true of
  // every hardware preset) and terms that fit in 64 bits with their carries;
  // the rest goes to the reference.
  const bool fast = model.structure == DotStructure::fused && model.fraction_bits != DotModel::exact_alignment &&
                    g >= 0 && model.fraction_bits <= 40;
  const std::size_t block = model.block_size == DotModel::whole_k ? std::max<std::size_t>(k, 1)
                                                                  : static_cast<std::size_t>(model.block_size);
  const Kernel kernel{config, detail::block_rounding(model, config.accumulator), g, block};
  const Lines rows = decode_lines(config.input, a, m, k, k, 1);
  const Lines cols = decode_lines(input_b, b, n, k, 1, n);
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

  const unsigned threads = std::max(1u, config.threads != 0 ? config.threads : std::thread::hardware_concurrency());
  const std::size_t per = (m + threads - 1) / threads;
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads && t * per < m; ++t) pool.emplace_back(run_rows, t * per, std::min(m, (t + 1) * per));
  run_rows(0, std::min(m, per));
  for (std::thread& t : pool) t.join();
}

}  // namespace fmtcheck
