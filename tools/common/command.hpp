// Each subcommand lives in its own file in commands/ and registers itself here, so
// adding a command never touches main.cpp.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

#include "common/usage_error.hpp"

namespace fmtcheck::cli {

// setup() adds the subcommand's options to `sub` and returns what runs it;
// the runner returns the process exit code.
struct Command {
  std::string name;
  std::string summary;
  int order = 0;  // position in --help
  std::function<std::function<int()>(CLI::App& sub)> setup;
};

bool register_command(Command c);

}  // namespace fmtcheck::cli
