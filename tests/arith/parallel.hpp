// Splits an index range over the machine's cores; each worker gets its own
// state (the reference tables keep the current policy) and its mismatches are
// collected for the report.
#pragma once

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "exhaustive.hpp"

namespace fmtcheck::testing {

struct Mismatches {
  std::uint64_t count = 0;
  std::vector<std::string> examples;  // the first few, in no particular order
};

// check(state, i, examples) returns false on a mismatch and may describe it.
template <typename MakeState, typename Check>
Mismatches parallel_check(std::uint64_t n, MakeState make_state, Check check, std::size_t max_examples = 5) {
  Mismatches total;
  std::mutex mutex;
  split_over_cores(n, [&](unsigned, std::uint64_t begin, std::uint64_t end) {
    auto state = make_state();
    Mismatches local;
    for (std::uint64_t i = begin; i < end; ++i) {
      std::string what;
      if (!check(state, i, what)) {
        if (++local.count <= max_examples) local.examples.push_back(what);
      }
    }
    std::lock_guard lock(mutex);
    total.count += local.count;
    for (auto& e : local.examples) {
      if (total.examples.size() < max_examples) total.examples.push_back(e);
    }
  });
  return total;
}

}  // namespace fmtcheck::testing
