// fmtcheck hw info: the device, its compute capability, the driver, and
// which conversions and instructions can run on it against which model.
#ifdef FMTCHECK_HAS_CUDA
#include <algorithm>
#include <fmt/format.h>
#include <string>
#include <vector>

#include "common/table.hpp"
#include "fmtcheck/cuda/convert.hpp"
#include "fmtcheck/cuda/device.hpp"
#include "fmtcheck/cuda/mma_cases.hpp"
#include "hw/command.hpp"

namespace fmtcheck::cli {
namespace {

std::string version(int v) { return fmt::format("{}.{}", v / 1000, v % 1000 / 10); }

int run_info() {
  // Every hw command looks for the GPU first: without one it says so and exits 2 (main.cpp).
  const cuda::DeviceInfo d = cuda::require_device();
  const int cc = d.compute_capability();
  fmt::print("device:             {}\n", d.name);
  fmt::print("compute capability: {}.{}\n", d.major, d.minor);
  fmt::print("driver supports:    CUDA {}\n", version(d.driver_version));
  fmt::print("runtime:            CUDA {}\n", version(d.runtime_version));
  fmt::print("memory:             {:.1f} GiB, {} multiprocessors\n", d.memory_bytes / 1073741824.0, d.multiprocessors);
  fmt::print("built for:          {}\n\n", cuda::built_architectures());

  Table conversions({"conversion", "format", "rounding", "runs here"});
  for (const cuda::DeviceConversion& c : cuda::device_conversions()) {
    conversions.add_row({std::string(c.ptx), c.target->name, std::string(to_string(c.rounding)),
                         cc >= c.min_compute_capability ? "yes" : fmt::format("no (needs sm_{})", c.min_compute_capability)});
  }
  fmt::print("{}\n", conversions.aligned());

  // A known gap is a sentence: it goes below the table as a numbered note,
  // so the table stays within the terminal's 100 columns.
  Table instructions({"instruction", "runs here", "model"});
  std::vector<std::string> notes;
  for (const cuda::MmaInstruction& i : cuda::mma_instructions()) {
    const cuda::ModelChoice m = cuda::model_for(i, cc);
    std::string model = m.model ? m.model->name : "none";
    if (!m.known_gap.empty()) {
      auto at = std::find(notes.begin(), notes.end(), m.known_gap);
      if (at == notes.end()) at = notes.insert(notes.end(), m.known_gap);
      model += fmt::format(" [{}]", at - notes.begin() + 1);
    }
    instructions.add_row({std::string(i.ptx),
                          i.runs_on(cc) ? "yes" : fmt::format("no (needs sm_{})", i.min_compute_capability),
                          model});
  }
  fmt::print("{}", instructions.aligned());
  for (std::size_t n = 0; n < notes.size(); ++n) {
    fmt::print("{}", wrap(fmt::format("[{}] ", n + 1), notes[n], terminal_width));
  }
  return 0;
}

const bool registered = register_hw_command({
    "info", "the device, compute capability, driver and what can run on it", 10,
    [](CLI::App&) -> std::function<int()> { return run_info; }});

}  // namespace
}  // namespace fmtcheck::cli
#endif
