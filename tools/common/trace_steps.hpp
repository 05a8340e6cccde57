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

// The name that identifies a tensor across steps: the safetensors key, or
// for a .npy file its name without the step ("step_0003_fc1.npy" -> "fc1",
// "step_0003.npy" -> "gradient"), so per-tensor state such as the delayed
// scaling history follows the tensor from step to step.
std::string trace_tensor_name(const std::string& file, const std::string& tensor);

}  // namespace fmtcheck::cli
