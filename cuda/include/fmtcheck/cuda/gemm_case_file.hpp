// A cuBLASLt GEMM measured on a GPU, as text: the configuration, the interval
// at which the emulator explained it, and a block of the operands with the
// hardware's D, so that the run is replayed through the emulated GEMM without
// a GPU (tests/cuda/test_gemm_replay.cpp replays docs/hardware/*/gemm-cases/).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fmtcheck/cuda/blaslt_gemm.hpp"

namespace fmtcheck::cuda {

struct GemmCases {
  BlasLtGemm gemm;
  std::string model;              // the tensor-core preset it was compared with
  std::size_t promote_every = 0;  // the interval that explained every output; 0: the whole K
  GemmOperands x;                 // a block of the measured GEMM: the first rows of A, first columns of B
  std::vector<std::uint32_t> d;   // the hardware's D for that block, row-major
};

// The top-left rows × cols block of the GEMM x with its D (row-major, x.n
// columns): every output of the block depends only on the block's rows of A,
// columns of B and elements of C.
GemmCases gemm_block(const BlasLtGemm& g, std::string model, std::size_t promote_every, const GemmOperands& x,
                     const std::vector<std::uint32_t>& d, std::size_t rows, std::size_t cols);

// "key value" lines (model, type, out, fast_accum, scale_a, scale_b, scale_d,
// promote_every, m, n, k) then lines "a", "b", "c", "d" with the words in
// hex (c: float32 bits; d: container bits of the output).
std::string gemm_cases_text(const GemmCases& cases);
// Throws std::invalid_argument, naming the line, on text that is not that.
GemmCases parse_gemm_cases(std::string_view text);

}  // namespace fmtcheck::cuda
