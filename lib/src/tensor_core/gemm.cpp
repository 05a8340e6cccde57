// gemm() on the CPU: the operands decoded line by line, then gemm_kernel.hpp's
// kernel (shared with the GPU; its fused blocks in vector lanes here,
// fused_vector.hpp) for every output on the CPU's threads, with
// what it does not cover (NaN and infinity, CDNA3 operands of 2^63 or more,
// sums wider than a WideSum) handed to dot_product_add; tests/tensor_core/test_gemm.cpp
// checks the whole bit for bit against dot_product_add. A 1024^3 FP8 GEMM
// takes seconds.
#include "fmtcheck/tensor_core/gemm.hpp"

#include <algorithm>
#include <bit>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <vector>

#include "fmtcheck/core/convert.hpp"
#include "fmtcheck/core/decode.hpp"
#include "fmtcheck/tensor_core/gemm_kernel.hpp"
#include "core/parallel.hpp"
#include "tensor_core/fused_vector.hpp"
#include "tensor_core/parallel.hpp"

namespace fmtcheck {
namespace {

// One operand matrix, decoded line by line (rows of A, columns of B) so that
// the inner loop over k reads contiguous memory. (Left uninitialised until
// decoded: a weight matrix is tens of megabytes.)
struct Lines {
  std::unique_ptr<std::int32_t[]> sig, align;
  std::vector<char> special;  // per line: some element is NaN or infinite
};

// Bits of `f`, read as values of `as` (f itself, or fp16 for FP8 mma.sync;
// exact either way). reencode: as != f, compared once per matrix (formats
// compare by name too).
detail::Operand decode_element(const Format& f, const Format& as, bool reencode, std::uint32_t bits, bool& special) {
  return reencode ? detail::decode_operand(as, convert_bits(bits, f, as).bits, special)
                  : detail::decode_operand(f, bits, special);
}

// Every code of a format of at most 16 bits, decoded by decode_element: when
// a matrix has more elements than the format has codes, each element is a
// lookup instead (a tenth of the time).
struct DecodeTable {
  std::vector<detail::Operand> operand;
  std::vector<char> special;
};
std::optional<DecodeTable> decode_table(const Format& f, const Format& as, std::size_t elements) {
  if (f.storage_bits > 16) return std::nullopt;
  const std::size_t codes = std::size_t{1} << f.storage_bits;
  if (elements < codes) return std::nullopt;
  DecodeTable t{std::vector<detail::Operand>(codes), std::vector<char>(codes)};
  const bool reencode = as != f;
  for (std::size_t code = 0; code < codes; ++code) {
    bool special = false;
    t.operand[code] = decode_element(f, as, reencode, static_cast<std::uint32_t>(code), special);
    t.special[code] = special ? 1 : 0;
  }
  return t;
}

// The matrix `m` of `f` read as `as`, line l's element i at
// m[l * line_stride + i * k_stride]. A line with an element aligned above
// max_align goes to the reference path too (CDNA3: its products may reach
// 2^128). Lines are decoded on several threads where there are enough of
// them (a weight matrix: as many elements as a one-row GEMM has products).
Lines decode_lines(const Format& f, const Format& as, std::span<const std::uint32_t> m, std::size_t lines,
                   std::size_t k, std::size_t line_stride, std::size_t k_stride, int max_align) {
  // Padded for the vector kernel's whole-vector loads.
  const std::size_t size = lines * k + detail::fused_vector_padding;
  Lines out{std::make_unique_for_overwrite<std::int32_t[]>(size), std::make_unique_for_overwrite<std::int32_t[]>(size),
            std::vector<char>(lines, 0)};
  std::fill(&out.sig[lines * k], &out.sig[size], 0);
  std::fill(&out.align[lines * k], &out.align[size], 0);
  const std::optional<DecodeTable> table = decode_table(f, as, lines * k);
  const bool reencode = as != f;
  detail::run_parallel(lines, detail::threads_for(std::uint64_t{lines} * k, std::uint64_t{1} << 16),
                       [&](std::uint64_t l) {
    bool any_special = false;
    for (std::size_t i = 0; i < k; ++i) {
      const std::uint32_t bits = m[l * line_stride + i * k_stride];
      bool special = false;
      detail::Operand o;
      if (table && bits < table->operand.size()) {
        o = table->operand[bits];
        special = table->special[bits] != 0;
      } else {
        o = decode_element(f, as, reencode, bits, special);
      }
      out.sig[l * k + i] = o.sig;
      out.align[l * k + i] = o.align;
      any_special = any_special || special || o.align > max_align;
    }
    out.special[l] = any_special ? 1 : 0;
  });
  return out;
}

// A decoded line from a chunk's start, contiguous along k.
struct ContiguousLine {
  const std::int32_t* sigs;
  const std::int32_t* aligns;
  [[nodiscard]] std::int32_t sig(std::size_t k) const { return sigs[k]; }
  [[nodiscard]] std::int32_t align(std::size_t k) const { return aligns[k]; }
};

// GemmKernel::chunk over contiguous lines, compiled as a function of its
// own: inlined into gemm_of_lines, GCC stopped inlining unpack() into the
// scalar blocks (CDNA3 a third slower).
[[gnu::noinline]] std::uint32_t scalar_chunk(const detail::GemmKernel& kernel, const ContiguousLine& row,
                                             const ContiguousLine& col, std::size_t len) {
  return kernel.chunk(row, col, len);
}

}  // namespace

namespace detail {

GemmSetup plan_gemm(const GemmConfig& config, std::size_t k) {
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
  // The kernel covers fused blocks, FP8 mma.sync and CDNA3 with truncation
  // when F >= m_a + m_b (true of every hardware preset) and its terms fit in
  // 64 bits with their carries; exact alignment below; the rest goes to the
  // reference.
  const bool late_c = model.structure == DotStructure::late_c || model.structure == DotStructure::odd_even;
  // CDNA2 (pairwise) sums fp32 values of fp16 or bf16 products, exact in float.
  const bool pairwise = model.structure == DotStructure::pairwise && read_a.precision() + read_b.precision() <= 24 &&
                        model.block_size > 0 && model.block_size <= static_cast<int>(max_pairwise_block) &&
                        (model.block_size & (model.block_size - 1)) == 0;
  const std::size_t block = model.block_size == DotModel::whole_k ? std::max<std::size_t>(k, 1)
                                                                  : static_cast<std::size_t>(model.block_size);
  // Exact alignment (fused blocks keeping every bit): a WideSum in units of
  // the lowest bit any term can have, when the block's largest sum fits.
  const auto lowest_bit = [](const Format& f) { return f.min_exponent() - f.mantissa_bits; };
  const int exact_base = std::min(lowest_bit(read_a) + lowest_bit(read_b), lowest_bit(config.accumulator));
  const int top_bit = std::max(read_a.max_exponent() + read_b.max_exponent() + 2, config.accumulator.max_exponent() + 1);
  const bool exact = model.structure == DotStructure::fused && model.fraction_bits == DotModel::exact_alignment &&
                     read_a.precision() + read_b.precision() <= 62 &&
                     top_bit - exact_base + std::bit_width(block + 1) + 1 <= 64 * WideSum::limbs;
  const bool fast = pairwise || exact ||
                    ((model.structure == DotStructure::fused || groups || late_c) &&
                     model.fraction_bits != DotModel::exact_alignment && g >= 0 && model.fraction_bits <= 40);
  const std::size_t slice = (k + config.split_k - 1) / config.split_k;
  const std::size_t chunk = config.promote_every == 0 ? std::max<std::size_t>(slice, 1) : config.promote_every;
  return {GemmKernel{model, config.accumulator, block_rounding(model, config.accumulator), g, block, model.structure,
                     read_a, read_b, exact_base},
          GemmPlan{k, config.split_k, slice, chunk, config.scale_a * config.scale_b},
          fast,
          read_a,
          read_b,
          // CDNA3 makes a product of 2^128 or more infinite: operands below
          // 2^63 keep every product below 2^128 for the kernel.
          late_c ? 62 : std::numeric_limits<int>::max()};
}

}  // namespace detail

namespace {

// gemm() and gemm_tn(): B's element (kk, j) at b[j * b_line_stride + kk * b_k_stride].
void gemm_of_lines(const GemmConfig& config, std::size_t m, std::size_t n, std::size_t k,
                   std::span<const std::uint32_t> a, std::span<const std::uint32_t> b, std::size_t b_line_stride,
                   std::size_t b_k_stride, std::span<const float> c, std::span<float> d) {
  if (a.size() != m * k || b.size() != k * n || c.size() != m * n || d.size() != m * n) {
    throw std::invalid_argument("gemm: matrix sizes do not match M, N, K");
  }
  const detail::GemmSetup setup = detail::plan_gemm(config, k);
  const Format& input_b = config.input_b ? *config.input_b : config.input;
  const Lines rows = decode_lines(config.input, setup.read_a, a, m, k, k, 1, setup.max_align);
  const Lines cols = decode_lines(input_b, setup.read_b, b, n, k, b_line_stride, b_k_stride, setup.max_align);
  // Fused blocks run in vector lanes, several columns of a row at once.
  const bool vector = setup.fast && detail::fused_vector_covers(setup.kernel);
  // The k ranges gemm_output asks the tensor core for, in its order (split-K
  // slices, promotion chunks): the same for every output.
  std::vector<std::pair<std::size_t, std::size_t>> ranges;
  detail::gemm_output(
      setup.plan, [&](std::size_t k0, std::size_t k1) { return ranges.emplace_back(k0, k1), 0.0f; }, 0.0f);

  // The tensor core's result for k in [k0, k1) of row i, column j, alone.
  const auto tensor_core = [&](std::size_t i, std::size_t j, std::size_t k0, std::size_t k1) -> float {
    const std::size_t ai = i * k + k0, bj = j * k + k0;
    if (setup.fast && !rows.special[i] && !cols.special[j]) {
      const ContiguousLine row{&rows.sig[ai], &rows.align[ai]}, col{&cols.sig[bj], &cols.align[bj]};
      return detail::accumulator_value(setup.kernel.accumulator, scalar_chunk(setup.kernel, row, col, k1 - k0));
    }
    std::vector<std::uint64_t> av(k1 - k0), bv(k1 - k0);
    for (std::size_t q = k0; q < k1; ++q) {
      av[q - k0] = a[i * k + q];
      bv[q - k0] = b[j * b_line_stride + q * b_k_stride];
    }
    const auto bits = dot_product_add(config.model, config.input, input_b, av, bv, 0, config.accumulator).bits;
    return detail::accumulator_value(setup.kernel.accumulator, static_cast<std::uint32_t>(bits));
  };

  // Outputs [o0, o1) in groups of up to fused_vector_columns columns of one
  // row: every range's tensor-core results of the group first (those the
  // vector kernel covers together), then each output's sum and epilogue.
  const auto run_outputs = [&](std::size_t o0, std::size_t o1) {
    constexpr std::size_t most = detail::fused_vector_columns;
    std::vector<float> value(most * ranges.size());  // value[col * ranges.size() + r]
    const auto takes = [&](std::size_t i, std::size_t j) { return vector && !rows.special[i] && !cols.special[j]; };
    detail::for_output_groups(o0, o1, n, takes, [&](const detail::OutputGroup& g) {
      for (std::size_t r = 0; r < ranges.size(); ++r) {
        const std::size_t k0 = ranges[r].first, k1 = ranges[r].second;  // (clang 14 cannot capture bindings)
        g.each_alone([&](std::size_t col) { value[col * ranges.size() + r] = tensor_core(g.i, g.j0 + col, k0, k1); });
        if (g.count == 0) continue;
        detail::FusedLines lines{&rows.sig[g.i * k + k0], &rows.align[g.i * k + k0], {}, {}};
        for (std::size_t t = 0; t < g.count; ++t) {
          lines.b_sig[t] = &cols.sig[(g.j0 + g.together[t]) * k + k0];
          lines.b_align[t] = &cols.align[(g.j0 + g.together[t]) * k + k0];
        }
        std::uint32_t bits[most];
        detail::fused_chunks_vector(setup.kernel, lines, g.count, k1 - k0, bits);
        for (std::size_t t = 0; t < g.count; ++t) {
          value[g.together[t] * ranges.size() + r] = detail::accumulator_value(setup.kernel.accumulator, bits[t]);
        }
      }
      for (std::size_t col = 0; col < g.size; ++col) {
        std::size_t next = col * ranges.size();
        const auto recorded = [&](std::size_t, std::size_t) { return value[next++]; };
        d[g.i * n + g.j0 + col] = detail::gemm_output(setup.plan, recorded, c[g.i * n + g.j0 + col]);
      }
    });
  };

  detail::parallel_outputs(m, n, k, config.threads, run_outputs);
}

}  // namespace

void gemm(const GemmConfig& config, std::size_t m, std::size_t n, std::size_t k, std::span<const std::uint32_t> a,
          std::span<const std::uint32_t> b, std::span<const float> c, std::span<float> d) {
  gemm_of_lines(config, m, n, k, a, b, 1, n, c, d);
}

void gemm_tn(const GemmConfig& config, std::size_t m, std::size_t n, std::size_t k, std::span<const std::uint32_t> a,
             std::span<const std::uint32_t> b, std::span<const float> c, std::span<float> d) {
  gemm_of_lines(config, m, n, k, a, b, k, 1, c, d);
}

}  // namespace fmtcheck
