#include "common/table.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace fmtcheck::cli {

std::vector<std::size_t> Table::widths() const {
  std::vector<std::size_t> width(headers_.size());
  for (std::size_t c = 0; c < headers_.size(); ++c) width[c] = headers_[c].size();
  for (const auto& row : rows_) {
    for (std::size_t c = 0; c < row.size() && c < width.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  return width;
}

void Table::shorten_to_fit(std::size_t column, std::size_t width) {
  constexpr std::size_t shortest_cell = 16;
  const std::vector<std::size_t> w = widths();
  std::size_t total = 2 * (w.size() - 1);
  for (const std::size_t c : w) total += c;
  if (total <= width) return;
  const std::size_t excess = total - width;
  const std::size_t target = std::max({shortest_cell, headers_[column].size(), w[column] > excess ? w[column] - excess : 0});
  for (auto& row : rows_) row[column] = elide(row[column], target);
}

std::string Table::aligned() const {
  const std::vector<std::size_t> width = widths();
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    std::string text;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      text += cells[c];
      if (c + 1 < cells.size()) text += std::string(width[c] - cells[c].size() + 2, ' ');
    }
    out += text + "\n";
  };
  line(headers_);
  for (const auto& row : rows_) line(row);
  return out;
}

std::string Table::csv() const {
  auto field = [](const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) {
      if (c == '"') q += '"';
      q += c;
    }
    return q + "\"";
  };
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    // Appended piece by piece: g++ 12 warns on "," + std::string&& with a
    // false -Wrestrict inside std::string's insert.
    for (std::size_t c = 0; c < cells.size(); ++c) {
      if (c != 0) out += ",";
      out += field(cells[c]);
    }
    out += "\n";
  };
  line(headers_);
  for (const auto& row : rows_) line(row);
  return out;
}

std::string shortest(double v) {
  char buf[64];
  const auto result = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, result.ptr);
}

std::string elide(const std::string& name, std::size_t width) {
  if (name.size() <= width) return name;
  const std::size_t head = (width - 3) / 2;
  return name.substr(0, head) + "..." + name.substr(name.size() - (width - 3 - head));
}

}  // namespace fmtcheck::cli
