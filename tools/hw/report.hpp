// What every `hw` comparison prints and writes: a summary line per
// comparison, the first differences as a table, every kept difference as
// CSV, and the exit code (1 on any unexplained difference).
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <string>
#include <vector>

#include "fmtcheck/cuda/compare.hpp"

namespace fmtcheck::cli {

struct ReportOptions {
  std::string csv;       // where the differences go as CSV ("-": stdout); empty: nowhere
  std::size_t show = 10;  // differences listed per comparison
};

void add_report_options(CLI::App& sub, ReportOptions& o);
// Prints and writes the comparisons; returns cuda::exit_code.
int report(const std::vector<cuda::Comparison>& all, const ReportOptions& o);

}  // namespace fmtcheck::cli
