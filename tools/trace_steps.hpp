// A gradient trace on disk: per-step tensor files, found in a folder by
// name (step_0000.safetensors, step-12.npy, step7_fc1.npy ...) or listed in
// a manifest (one line per step, whitespace-separated paths relative to the
// manifest, # comments).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fmtcheck::cli {

struct TraceStep {
  std::uint64_t step = 0;
  std::vector<std::string> files;
};

// The steps in order; throws UsageError for a missing or unreadable path, a
// folder without step files, a gap in the step numbers, or a manifest line
// naming a file that does not exist.
std::vector<TraceStep> list_trace(const std::string& path);

}  // namespace fmtcheck::cli
