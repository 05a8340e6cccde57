// How the GEMMs (gemm.cpp, gemm_block_scaled.cpp) spread their outputs over
// threads: each element of D depends on its row and column only, so outputs
// split into ranges give the same bits on any number of threads.
#pragma once

#include <algorithm>
#include <cstddef>

#include "core/parallel.hpp"

namespace fmtcheck::detail {

// run(o0, o1) on nearly equal ranges of the m x n outputs [0, m n), row-major,
// each output a dot product of length k: one range per thread. threads = 0:
// one per hardware thread, fewer when the GEMM has too few products to repay
// them (an emulated product takes nanoseconds: a thread takes on 2^18 or more,
// about a millisecond). Ranges of outputs, not of rows, so that a one-row
// GEMM (a token at a time) uses every thread too.
template <class Run>
void parallel_outputs(std::size_t m, std::size_t n, std::size_t k, unsigned threads, const Run& run) {
  const std::size_t outputs = m * n;
  const std::size_t count = std::clamp<std::size_t>(
      threads != 0 ? threads : threads_for(std::uint64_t{outputs} * std::max<std::size_t>(k, 1), std::size_t{1} << 18),
      1, std::max<std::size_t>(outputs, 1));
  const std::size_t per = (outputs + count - 1) / count;
  run_parallel(count, static_cast<unsigned>(count), [&](std::uint64_t t) {
    run(std::min(outputs, t * per), std::min(outputs, (t + 1) * per));
  });
}

}  // namespace fmtcheck::detail
