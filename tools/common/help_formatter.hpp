// --help within the terminal's 100 columns: CLI11 prints a command's, each
// option's and each subcommand's description on one line (the latter two
// after a 30-column name); this formatter wraps them, keeping the lines
// they already have.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace fmtcheck::cli {

class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_option_desc(const CLI::Option* opt) const override;
  std::string make_subcommand(const CLI::App* sub) const override;
  std::string make_description(const CLI::App* app) const override;
};

}  // namespace fmtcheck::cli
