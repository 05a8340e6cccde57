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

std::string compact(double v) {
  if (v == std::floor(v) && std::abs(v) < 1e15) return std::to_string(static_cast<long long>(v));
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", v);
  return text;
}

std::string wrap(const std::string& lead, const std::string& text, std::size_t width) {
  std::string out, line = lead;
  bool empty = true;  // nothing after the lead yet
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    start = end + 1;
    if (word.empty()) {  // a run of spaces: kept inside a line, dropped at a break
      if (!empty) line += " ";
      continue;
    }
    if (!empty && line.size() + 1 + word.size() > width) {
      while (line.back() == ' ') line.pop_back();
      out += line + "\n";
      line = std::string(lead.size(), ' ');
      empty = true;
    }
    line += (empty ? "" : " ") + word;
    empty = false;
  }
  return out + line + "\n";
}

std::string elide(const std::string& name, std::size_t width) {
  if (name.size() <= width) return name;
  const std::size_t head = (width - 3) / 2;
  return name.substr(0, head) + "..." + name.substr(name.size() - (width - 3 - head));
}

std::string share(std::uint64_t n, std::uint64_t of) {
  if (n == 0) return "0";
  const double p = 100.0 * static_cast<double>(n) / static_cast<double>(std::max<std::uint64_t>(of, 1));
  char text[64];
  if (p < 0.01) {
    std::snprintf(text, sizeof text, "%llu (<0.01%%)", static_cast<unsigned long long>(n));
  } else {
    std::snprintf(text, sizeof text, "%llu (%.3g%%)", static_cast<unsigned long long>(n), p);
  }
  return text;
}

}  // namespace fmtcheck::cli
