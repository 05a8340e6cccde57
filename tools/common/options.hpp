// Options shared by several subcommands: formats and the policy axes.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/policy.hpp"
#include "fmtcheck/core/policy_text.hpp"

namespace fmtcheck::cli {

// The policy axes as the options give them (lib/core/policy_text.hpp).
using PolicyOptions = PolicyText;

// Adds --round, --overflow, --subnormals, --tininess, --nan, --sr-bits (and
// --sr-random when `single_value`) to `sub`.
void add_policy_options(CLI::App& sub, PolicyOptions& o, bool single_value);

// A format name or spec, or UsageError.
Format parse_format_option(const std::string& text);

// Where fmtcheck's own arithmetic runs: the CPU's cores, or the GPU (the
// library's rounding compiled for it, cuda/src/emulator/: the same bits).
enum class Device { cpu, cuda };
// Adds --device cpu|cuda (default cpu) to `sub`.
void add_device_option(CLI::App& sub, std::string& device);
// "cpu" or "cuda"; UsageError otherwise, and for cuda in a build without CUDA
// or on a machine without a GPU ("--device cuda: no GPU found: ...").
Device parse_device_option(const std::string& text);

}  // namespace fmtcheck::cli
