// The text layout of published tensor-core measurements (Khattak & Mikaitis,
// model_validation; see ../shared/data/tensor-core/README.md): operands as
// 8-hex-digit float32 bit patterns separated by white space, C and D as one
// 32-binary-digit float32 bit pattern per line. fmtcheck's own hardware runs
// add a file beside the D files naming the instruction that computed each.
#pragma once

#include <cstdint>
#include <map>
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

// The file in a folder of cases that names the instruction each D file was
// computed by, one line "d_TAG_OUT.txt MNEMONIC" per D file, '#' starting a
// comment line. A separate file, so that the D files keep the published
// layout (and the published data, which has none, stays as it is).
inline constexpr const char* instruction_file_name = "instruction.txt";
// D file name -> the instruction's PTX mnemonic; UsageError on bad text.
std::map<std::string, std::string> read_instruction_file(const std::string& path);
// The file for one D file, with a comment saying what it is.
void write_instruction_file(OutputFile& out, const std::string& d_file, const std::string& mnemonic);

}  // namespace fmtcheck::cli
