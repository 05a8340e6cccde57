// Differences between hardware and emulator, as text and CSV.
#include "fmtcheck/cuda/compare.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <fmt/format.h>

#include "fmtcheck/core/decode.hpp"

namespace fmtcheck::cuda {
namespace {

// The terminal width the difference tables keep to.
constexpr std::size_t table_width = 100;

// Shortest decimal that reads back as the same double.
std::string shortest(double v) { return fmt::format("{}", v); }

// Codes in value order: negative magnitudes below zero, -0 and +0 one point.
long long ordinal(const Format& f, std::uint64_t bits) {
  const std::uint64_t code = f.from_storage(bits);
  const auto magnitude = static_cast<long long>(code & f.magnitude_mask());
  return (code & f.sign_bit()) != 0 ? -magnitude : magnitude;
}

// Inputs on lines of at most table_width columns: one line per "; "-separated
// part ("a = ...", "b = ...", "c = ..."), a long part broken between operands.
std::string input_lines(const std::string& inputs, const std::string& indent) {
  std::string out;
  std::size_t start = 0;
  while (start < inputs.size()) {
    std::size_t end = inputs.find("; ", start);
    if (end == std::string::npos) end = inputs.size();
    std::string part = inputs.substr(start, end - start);
    start = end + 2;
    std::string lead;  // continuation lines are indented under the part
    while (lead.size() + part.size() > table_width - indent.size()) {
      const std::size_t cut = part.rfind(' ', table_width - indent.size() - lead.size());
      if (cut == std::string::npos || cut == 0) break;  // one unbreakable word: leave it long
      out += indent + lead + part.substr(0, cut) + "\n";
      part = part.substr(cut + 1);
      lead = "  ";
    }
    out += indent + lead + part + "\n";
  }
  return out;
}

}  // namespace

std::string value_difference(const Format& f, std::uint64_t hardware, std::uint64_t emulator) {
  const double h = to_double(f, hardware), e = to_double(f, emulator);
  if (std::isnan(h) || std::isnan(e)) return "nan";
  // Exact whenever the two are within 2^29 of each other in ratio (fp32's 24
  // bits in double's 53); beyond that the nearest double is plenty.
  return shortest(h - e);
}

long long ulp_distance(const Format& f, std::uint64_t hardware, std::uint64_t emulator) {
  if (std::isnan(to_double(f, hardware)) || std::isnan(to_double(f, emulator))) return -1;
  const long long d = ordinal(f, hardware) - ordinal(f, emulator);
  return d < 0 ? -d : d;
}

std::string summary_line(const Comparison& c) {
  std::string line = fmt::format("{}: {} compared, {} differ", c.title, c.compared, c.differing);
  if (c.differing != 0 && !c.known_gap.empty()) line += " (known gap: " + c.known_gap + ")";
  return line;
}

std::string difference_table(const Comparison& c, std::size_t max_rows) {
  const std::size_t rows = std::min(max_rows, c.kept.size());
  std::vector<std::array<std::string, 6>> cells;
  cells.push_back({"inputs", "hardware", "emulator", "hardware value", "emulator value", "difference (ulps)"});
  for (std::size_t i = 0; i < rows; ++i) {
    const Difference& d = c.kept[i];
    const long long ulps = ulp_distance(c.output, d.hardware, d.emulator);
    cells.push_back({d.inputs, to_hex(c.output, d.hardware), to_hex(c.output, d.emulator),
                     shortest(to_double(c.output, d.hardware)), shortest(to_double(c.output, d.emulator)),
                     value_difference(c.output, d.hardware, d.emulator) +
                         (ulps >= 0 ? fmt::format(" ({})", ulps) : std::string())});
  }
  std::array<std::size_t, 6> width{};
  for (const auto& row : cells) {
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::size_t total = 2;
  for (std::size_t w : width) total += w + 2;
  std::string out;
  if (total - 2 <= table_width) {  // one aligned row per difference
    for (const auto& row : cells) {
      std::string line = "  ";
      for (std::size_t i = 0; i < row.size(); ++i) line += fmt::format("{:<{}}  ", row[i], width[i]);
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
    }
  } else {  // operand lists too long for a row: the results, then the inputs below them
    for (std::size_t r = 1; r < cells.size(); ++r) {
      const auto& row = cells[r];
      out += fmt::format("  {}. hardware {} = {}, emulator {} = {}\n", r, row[1], row[3], row[2], row[4]);
      const std::string indent(fmt::format("  {}. ", r).size(), ' ');
      out += fmt::format("{}difference (ulps) {}\n", indent, row[5]);
      out += input_lines(row[0], indent);
    }
  }
  if (c.differing > rows) out += fmt::format("  ... {} more (all kept ones are in the CSV)\n", c.differing - rows);
  return out;
}

std::string differences_csv(const std::vector<Comparison>& all) {
  std::string out = "comparison,inputs,hardware_bits,emulator_bits,hardware_value,emulator_value,difference,ulps\n";
  for (const Comparison& c : all) {
    for (const Difference& d : c.kept) {
      out += fmt::format("\"{}\",\"{}\",{},{},{},{},{},{}\n", c.title, d.inputs, to_hex(c.output, d.hardware),
                         to_hex(c.output, d.emulator), shortest(to_double(c.output, d.hardware)),
                         shortest(to_double(c.output, d.emulator)), value_difference(c.output, d.hardware, d.emulator),
                         ulp_distance(c.output, d.hardware, d.emulator));
    }
  }
  return out;
}

int exit_code(const std::vector<Comparison>& all) {
  return std::any_of(all.begin(), all.end(), [](const Comparison& c) { return c.unexplained(); }) ? 1 : 0;
}

}  // namespace fmtcheck::cuda
