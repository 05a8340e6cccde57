#include "fmtcheck/analysis/report_text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace fmtcheck {

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

}  // namespace fmtcheck
