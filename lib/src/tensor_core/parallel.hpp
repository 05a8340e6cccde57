// How the GEMMs (gemm.cpp, gemm_block_scaled.cpp) spread output rows over
// threads: each element of D depends on its row and column only, so rows
// split into ranges give the same bits on any number of threads.
#pragma once

#include <algorithm>
#include <cstddef>
#include <thread>
#include <vector>

namespace fmtcheck::detail {

// run(i0, i1) on nearly equal ranges of rows [0, m), one per thread
// (threads = 0: one per hardware thread), the first on the calling thread.
template <class Run>
void parallel_rows(std::size_t m, unsigned threads, const Run& run) {
  const unsigned count = std::max(1u, threads != 0 ? threads : std::thread::hardware_concurrency());
  const std::size_t per = (m + count - 1) / count;
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < count && t * per < m; ++t) pool.emplace_back(run, t * per, std::min(m, (t + 1) * per));
  run(0, std::min(m, per));
  for (std::thread& t : pool) t.join();
}

}  // namespace fmtcheck::detail
