#ifdef FMTCHECK_HAS_CUDA
#include "hw/report.hpp"

#include <fmt/format.h>

#include "common/output_file.hpp"
#include "common/table.hpp"

namespace fmtcheck::cli {

void add_report_options(CLI::App& sub, ReportOptions& o) {
  sub.add_option("--csv", o.csv, "write every difference as CSV to this file ('-': standard output)");
  sub.add_option("--show", o.show, "differences listed per comparison")->capture_default_str();
}

int report(const std::vector<cuda::Comparison>& all, const ReportOptions& o) {
  for (const cuda::Comparison& c : all) {
    // "title: N compared, M differ (known gap: ...)"; where that does not fit
    // the terminal, the title (wrapped, unindented) and then the counts on
    // indented lines: cuda/run-hardware-comparison.sh joins them again.
    const std::string line = cuda::summary_line(c);
    if (line.size() <= terminal_width) {
      fmt::print("{}\n", line);
    } else {
      fmt::print("{}{}", wrap("", c.title + ":", terminal_width),
                 wrap("  ", line.substr(c.title.size() + 2), terminal_width));
    }
    if (c.differing != 0 && o.show != 0) fmt::print("{}", cuda::difference_table(c, o.show));
  }
  if (!o.csv.empty()) {
    OutputFile file(o.csv);
    file.write(cuda::differences_csv(all));
    file.commit();
  }
  const int code = cuda::exit_code(all);
  fmt::print("{}\n", code == 0 ? "PASS: no unexplained difference" : "FAIL: unexplained differences");
  return code;
}

}  // namespace fmtcheck::cli
#endif
