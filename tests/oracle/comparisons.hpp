// Mismatch bookkeeping for exhaustive oracle sweeps. One sweep computes
// fmtcheck's result once per input and compares it with several oracles, so
// each comparison keeps its own count and first examples; the report runs on
// the test's thread afterwards because doctest assertions are not thread-safe.
#pragma once

#include <doctest/doctest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "exhaustive.hpp"

namespace fmtcheck::oracle {

class Comparisons {
 public:
  static constexpr std::size_t max_comparisons = 32;
  static constexpr std::size_t max_examples = 4;

  // Registers a comparison; returns its index for fail().
  std::size_t add(std::string name) {
    names_.push_back(std::move(name));
    examples_.emplace_back();
    return names_.size() - 1;
  }

  // Records a mismatch of comparison `which` on float32 input `input`;
  // returns false so a check can `ok &= ...` or `return fail(...)`.
  bool fail(std::size_t which, std::uint32_t input, std::uint64_t oracle, std::uint64_t fmtcheck) {
    counts_[which].fetch_add(1, std::memory_order_relaxed);
    std::lock_guard lock(mutex_);
    if (examples_[which].size() < max_examples) {
      char line[96];
      std::snprintf(line, sizeof line, "input 0x%08x: oracle 0x%llx, fmtcheck 0x%llx", input,
                    static_cast<unsigned long long>(oracle), static_cast<unsigned long long>(fmtcheck));
      examples_[which].emplace_back(line);
    }
    return false;
  }

  // Compares one value; counts and returns whether they agree.
  bool expect(std::size_t which, std::uint32_t input, std::uint64_t oracle, std::uint64_t fmtcheck) {
    return oracle == fmtcheck || fail(which, input, oracle, fmtcheck);
  }

  // One doctest CHECK per comparison, with the first examples on failure.
  void report() const {
    for (std::size_t i = 0; i < names_.size(); ++i) {
      const std::uint64_t n = counts_[i].load();
      std::string detail = names_[i] + ": " + std::to_string(n) + " mismatches";
      for (const auto& e : examples_[i]) detail += "\n  " + e;
      INFO(detail);
      CHECK(n == 0);
    }
  }

 private:
  std::vector<std::string> names_;
  std::array<std::atomic<std::uint64_t>, max_comparisons> counts_{};
  std::vector<std::vector<std::string>> examples_;
  std::mutex mutex_;
};

// Runs check over every float32 input, reports the throughput (so the
// runtime each sweep costs CI is visible in the log) and the total.
template <typename Check>
testing::SweepResult timed_sweep(const char* what, Check check) {
  const auto start = std::chrono::steady_clock::now();
  const testing::SweepResult r = testing::sweep_float32(check);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  MESSAGE(std::string(what) << ": " << r.checked << " inputs in " << seconds << " s (" << r.checked / seconds / 1e6
                << " M inputs/s), " << r.mismatches << " inputs with a mismatch");
  CHECK(r.checked == (std::uint64_t{1} << 32));
  return r;
}

}  // namespace fmtcheck::oracle
