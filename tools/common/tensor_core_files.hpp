// The text layout of published tensor-core measurements (Khattak & Mikaitis,
// model_validation; see ../shared/data/tensor-core/README.md): operands as
// 8-hex-digit float32 bit patterns separated by white space, C and D as one
// 32-binary-digit float32 bit pattern per line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/output_file.hpp"

namespace fmtcheck::cli {

// Every white-space separated hex word of the file; UsageError on bad text.
std::vector<std::uint32_t> read_hex_words(const std::string& path);
// One 32-digit binary number per non-empty line; UsageError on bad text.
std::vector<std::uint32_t> read_binary_lines(const std::string& path);
// The same layout, one value per line.
void write_binary_lines(OutputFile& out, const std::vector<std::uint32_t>& values);

}  // namespace fmtcheck::cli
