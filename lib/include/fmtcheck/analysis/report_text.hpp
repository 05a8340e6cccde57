// Report wording shared by the CLI's tables and the library's verdict:
// counts with their share, numbers short enough to read, text wrapped to a
// terminal's width.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace fmtcheck {

// Whole numbers in full, others to four significant digits ("1234", "0.0001221"):
// enough to read a table (the CSV keeps every digit).
std::string compact(double v);
// "12 (0.81%)": a count and its share of `of` values ("0", "3 (<0.01%)").
std::string share(std::uint64_t n, std::uint64_t of);
// `lead` then `text`, broken at spaces into lines of at most `width` columns
// (a longer word gets a line of its own; runs of spaces inside a line stay),
// the lines after the first indented as far as `lead` reaches; every line
// ends in a newline.
std::string wrap(const std::string& lead, const std::string& text, std::size_t width);

}  // namespace fmtcheck
