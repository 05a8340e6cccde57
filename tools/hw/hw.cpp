// fmtcheck hw: run conversions and tensor-core instructions on the GPU and
// compare them bit for bit with the emulator. A build without CUDA keeps the
// command so that it can say, in one line, why it cannot run.
#include <algorithm>
#include <iostream>
#include <map>

#include "hw/command.hpp"

namespace fmtcheck::cli {

std::vector<Command>& hw_commands() {
  static std::vector<Command> commands;
  return commands;
}

bool register_hw_command(Command c) {
  hw_commands().push_back(std::move(c));
  return true;
}

namespace {

#ifdef FMTCHECK_HAS_CUDA
std::function<int()> setup_hw(CLI::App& hw) {
  hw.require_subcommand(1);
  auto commands = hw_commands();
  std::sort(commands.begin(), commands.end(), [](const Command& a, const Command& b) { return a.order < b.order; });
  auto runners = std::make_shared<std::map<CLI::App*, std::function<int()>>>();
  for (const Command& c : commands) {
    CLI::App* sub = hw.add_subcommand(c.name, c.summary);
    (*runners)[sub] = c.setup(*sub);
  }
  return [runners] {
    for (auto& [sub, run] : *runners) {
      if (sub->parsed()) return run();
    }
    return 2;
  };
}
#else
std::function<int()> setup_hw(CLI::App& hw) {
  hw.allow_extras();
  return [] {
    std::cerr << "fmtcheck: hw: this build has no CUDA support (configured without nvcc or with "
                 "FMTCHECK_ENABLE_CUDA=OFF)\n";
    return 2;
  };
}
#endif

const bool registered = register_command({
    "hw",
    "run conversions, tensor-core instructions, cuBLASLt GEMMs and a training step on the GPU against the emulator",
    90,
    setup_hw,
});

}  // namespace
}  // namespace fmtcheck::cli
