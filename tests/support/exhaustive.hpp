// Runs a check over every float32 bit pattern on all cores and collects the
// inputs it rejects, so exhaustive oracle tests read as one line each; and
// the splitting of a range over the cores that it and other sweeps share.
#pragma once

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace fmtcheck::testing {

// Runs work(worker, begin, end) on every core, each over its own
// consecutive part of [0, total), and returns when all are done.
template <typename Work>
void split_over_cores(std::uint64_t total, Work work) {
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] { work(t, total * t / threads, total * (t + 1) / threads); });
  }
  for (auto& th : pool) th.join();
}

struct SweepResult {
  std::uint64_t checked = 0;
  std::uint64_t mismatches = 0;
  std::vector<std::uint32_t> examples;  // the first few rejected inputs, ascending
};

// check(bits) returns true when the input agrees. [first, last] inclusive.
template <typename Check>
SweepResult sweep_float32(Check check, std::uint64_t first = 0, std::uint64_t last = 0xFFFFFFFFu,
                          std::size_t max_examples = 8) {
  SweepResult result;
  result.checked = last - first + 1;
  std::mutex mutex;
  split_over_cores(result.checked, [&](unsigned, std::uint64_t begin, std::uint64_t end) {
    std::uint64_t bad = 0;
    std::vector<std::uint32_t> examples;
    for (std::uint64_t i = first + begin; i < first + end; ++i) {
      if (!check(static_cast<std::uint32_t>(i))) {
        if (examples.size() < max_examples) examples.push_back(static_cast<std::uint32_t>(i));
        ++bad;
      }
    }
    std::lock_guard lock(mutex);
    result.mismatches += bad;
    result.examples.insert(result.examples.end(), examples.begin(), examples.end());
  });
  std::sort(result.examples.begin(), result.examples.end());
  if (result.examples.size() > max_examples) result.examples.resize(max_examples);
  return result;
}

}  // namespace fmtcheck::testing
