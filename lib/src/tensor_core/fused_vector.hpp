// The CPU's vector kernel for the fused tensor-core structures: one block's
// products side by side in the lanes of a vector (along k), several columns
// at once, the rest of a block as GemmKernel (or, block-scaled,
// BlockScaledKernel) does it. gemm() and gemm_block_scaled() call it where
// it covers the model; tests/tensor_core/test_fused_vector.cpp checks it bit
// for bit against GemmKernel::chunk and BlockScaledKernel::instruction on
// every vector width this CPU runs.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include <optional>

#include "fmtcheck/core/format.hpp"
#include "fmtcheck/tensor_core/block_scaled_kernel.hpp"
#include "fmtcheck/tensor_core/gemm_kernel.hpp"

namespace fmtcheck::detail {

// The most columns of B one call takes.
inline constexpr std::size_t fused_vector_columns = 4;

// The elements each operand array must hold past the last one a line uses:
// the kernel loads whole vectors (at most 16 lanes) and ignores the lanes
// past a block, whatever they hold.
inline constexpr std::size_t fused_vector_padding = 16;

// A row of A and up to fused_vector_columns columns of B, decoded as gemm()
// decodes them (significands and alignments), each contiguous along k, in
// arrays padded by fused_vector_padding elements.
struct FusedLines {
  const std::int32_t* a_sig;
  const std::int32_t* a_align;
  const std::int32_t* b_sig[fused_vector_columns];
  const std::int32_t* b_align[fused_vector_columns];
};

// Outputs of a row-major result with n columns, taken up to
// fused_vector_columns columns of one row at a time: the columns the vector
// kernel takes go together, the rest one by one.
struct OutputGroup {
  std::size_t i = 0, j0 = 0, size = 0;  // row, first column, columns
  std::size_t together[fused_vector_columns] = {};  // the columns (from j0) the vector kernel takes
  std::size_t count = 0;  // how many

  // alone(col) for each column of the group the vector kernel does not take.
  template <class Alone>
  void each_alone(const Alone& alone) const {
    for (std::size_t col = 0, t = 0; col < size; ++col) {
      if (t < count && together[t] == col) {
        ++t;
      } else {
        alone(col);
      }
    }
  }
};

// run(group) for the outputs [o0, o1) in groups; takes(i, j) says whether
// the vector kernel takes output (i, j).
template <class Takes, class Run>
void for_output_groups(std::size_t o0, std::size_t o1, std::size_t n, const Takes& takes, const Run& run) {
  for (std::size_t o = o0; o < o1;) {
    OutputGroup g;
    g.i = o / n;
    g.j0 = o % n;
    g.size = std::min({fused_vector_columns, o1 - o, n - g.j0});
    for (std::size_t col = 0; col < g.size; ++col) {
      if (takes(g.i, g.j0 + col)) g.together[g.count++] = col;
    }
    run(g);
    o += g.size;
  }
}

// Whether fused_chunks_vector computes `kernel`'s chunks: fused blocks with a
// finite F of at most 25 bits (every NVIDIA preset) and FP8 mma.sync's fp16
// groups. Then a product's significand times 2^G stays below 2^27, so 16 of
// them sum exactly in 32-bit lanes.
bool fused_vector_covers(const GemmKernel& kernel);

// out[col] = kernel.chunk(row, column col, len) for the first `columns`
// (1 to fused_vector_columns) columns of `lines`.
void fused_chunks_vector(const GemmKernel& kernel, const FusedLines& lines, std::size_t columns, std::size_t len,
                         std::uint32_t* out);

// G for block_scaled_vector when it computes `kernel`'s instructions on
// these formats: every scaled product its own term (no groups), E8M0 scales
// (powers of two), and the largest |a*b| times 2^G below 2^27
// (kind::mxf8f6f4: every element format). G = F less both elements'
// mantissa bits.
std::optional<int> block_scaled_vector_shift(const BlockScaledKernel& kernel, const Format& input,
                                             const Format& scale_format);

// One instruction of len elements for the first `columns` columns:
// c_bits[col], C in fp32 bits, becomes D as kernel.instruction computes it.
// `elements` holds the instruction's row of A and columns of B, `scales`
// their E8M0 scales (one per scale_block elements), decoded as
// decode_operand decodes them (a scale's significand is not read).
void block_scaled_vector(const BlockScaledKernel& kernel, int shift_up, const FusedLines& elements,
                         const FusedLines& scales, std::size_t columns, std::size_t len, std::uint32_t* c_bits);

// The lanes a block's products take at a time on this CPU (16 with AVX-512,
// 8 with AVX2, 4 with SSE4; a block of 8 or 4 products takes at most that
// many).
std::size_t fused_vector_lanes();

}  // namespace fmtcheck::detail
