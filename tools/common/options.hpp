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

}  // namespace fmtcheck::cli
