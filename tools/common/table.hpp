// A table of strings printed either aligned for people or as CSV for pandas.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace fmtcheck::cli {

class Table {
 public:
  explicit Table(std::vector<std::string> headers) : headers_(std::move(headers)) {}
  void add_row(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  [[nodiscard]] const std::vector<std::string>& headers() const { return headers_; }
  [[nodiscard]] const std::vector<std::vector<std::string>>& rows() const { return rows_; }
  // Columns padded to their widest cell, two spaces apart.
  [[nodiscard]] std::string aligned() const;
  // RFC 4180: fields with commas, quotes or newlines are quoted.
  [[nodiscard]] std::string csv() const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

// Shortest decimal that reads back as the same double ("65504", "6.103515625e-05").
std::string shortest(double v);

}  // namespace fmtcheck::cli
