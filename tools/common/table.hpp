// A table of strings printed either aligned for people or as CSV for pandas.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "fmtcheck/analysis/report_text.hpp"

namespace fmtcheck::cli {

// The library's report wording (the verdict uses it too), by the CLI's names.
using fmtcheck::compact;
using fmtcheck::share;
using fmtcheck::wrap;

class Table {
 public:
  explicit Table(std::vector<std::string> headers) : headers_(std::move(headers)) {}
  void add_row(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  [[nodiscard]] const std::vector<std::string>& headers() const { return headers_; }
  [[nodiscard]] const std::vector<std::vector<std::string>>& rows() const { return rows_; }
  // Columns padded to their widest cell, two spaces apart.
  [[nodiscard]] std::string aligned() const;
  // Cuts the cells of `column` in the middle (to no fewer than 16
  // characters) until aligned() fits `width` columns, where it can.
  void shorten_to_fit(std::size_t column, std::size_t width);
  // RFC 4180: fields with commas, quotes or newlines are quoted.
  [[nodiscard]] std::string csv() const;

 private:
  [[nodiscard]] std::vector<std::size_t> widths() const;
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

// What people read on a terminal fits this many columns (the default
// outputs of analyze, scale and mma --check; CSV and JSON carry the rest).
constexpr std::size_t terminal_width = 100;

// Shortest decimal that reads back as the same double ("65504", "6.103515625e-05").
std::string shortest(double v);
// A name cut in the middle to at most `width` (>= 5) characters, so that its
// start and its end (".weight", ".bias") stay readable.
std::string elide(const std::string& name, std::size_t width);

}  // namespace fmtcheck::cli
