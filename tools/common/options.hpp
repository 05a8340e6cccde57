// Options shared by several subcommands: formats and the policy axes.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/policy.hpp"

namespace fmtcheck::cli {

struct PolicyOptions {
  std::string round = "rne";
  std::string overflow = "nosat";
  std::string subnormals = "keep";
  std::string tininess = "after";
  std::string nan = "ieee";
  std::uint32_t sr_random = 0;  // convert: the random draw for --round sr
  int sr_bits = 0;              // how many random bits stochastic rounding uses
};

// Adds --round, --overflow, --subnormals, --tininess, --nan, --sr-bits (and
// --sr-random when `single_value`) to `sub`.
void add_policy_options(CLI::App& sub, PolicyOptions& o, bool single_value);
// Validates and builds the policy; throws UsageError naming the bad option.
Policy to_policy(const PolicyOptions& o);

// A format name or spec, or UsageError.
Format parse_format_option(const std::string& text);
// "fp16,bf16,e4m3" -> formats, or UsageError.
std::vector<Format> parse_format_list(const std::string& text);

}  // namespace fmtcheck::cli
