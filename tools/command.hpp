// Each subcommand lives in its own cmd_*.cpp and registers itself here, so
// adding a command never touches main.cpp.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <stdexcept>
#include <string>

namespace fmtcheck::cli {

// Bad input from the user: printed as one line on stderr, exit code 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

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
