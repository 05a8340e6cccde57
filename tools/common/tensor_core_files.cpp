#include "common/tensor_core_files.hpp"

#include <fstream>
#include <sstream>

#include "common/usage_error.hpp"

namespace fmtcheck::cli {
namespace {

std::ifstream open_or_throw(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError("cannot read '" + path + "'");
  return in;
}

// Parses `word` in `base`, all of it, into 32 bits.
std::uint32_t parse_word(const std::string& word, int base, std::size_t digits, const std::string& path) {
  std::size_t used = 0;
  unsigned long v = 0;
  try {
    v = std::stoul(word, &used, base);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != word.size() || word.size() != digits) {
    throw UsageError("'" + path + "': expected " + std::to_string(digits) + " base-" + std::to_string(base) +
                     " digits, found '" + word + "'");
  }
  return static_cast<std::uint32_t>(v);
}

std::vector<std::uint32_t> read_words(const std::string& path, int base, std::size_t digits) {
  std::ifstream in = open_or_throw(path);
  std::vector<std::uint32_t> out;
  std::string word;
  while (in >> word) out.push_back(parse_word(word, base, digits, path));
  return out;
}

}  // namespace

std::vector<std::uint32_t> read_hex_words(const std::string& path) { return read_words(path, 16, 8); }

std::vector<std::uint32_t> read_binary_lines(const std::string& path) { return read_words(path, 2, 32); }

std::map<std::string, std::string> read_instruction_file(const std::string& path) {
  std::ifstream in = open_or_throw(path);
  std::map<std::string, std::string> out;
  std::size_t number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    std::istringstream words(line);
    std::string d_file, mnemonic, extra;
    if (!(words >> d_file) || d_file.starts_with('#')) continue;
    if (!(words >> mnemonic) || (words >> extra) || !d_file.starts_with("d_")) {
      throw UsageError("'" + path + "' line " + std::to_string(number) +
                       ": expected a D file and its instruction, as 'd_H100_fp32.txt mma.sync.aligned...'");
    }
    if (!out.emplace(d_file, mnemonic).second) {
      throw UsageError("'" + path + "' line " + std::to_string(number) + ": names " + d_file + " twice");
    }
  }
  return out;
}

void write_instruction_file(OutputFile& out, const std::string& d_file, const std::string& mnemonic) {
  out.write("# The tensor-core instruction that computed each D file here (fmtcheck hw mma --cases);\n"
            "# fmtcheck mma --check picks its model by it.\n" +
            d_file + " " + mnemonic + "\n");
}

void write_binary_lines(OutputFile& out, const std::vector<std::uint32_t>& values) {
  std::string text;
  text.reserve(values.size() * 33);
  for (const std::uint32_t v : values) {
    for (int bit = 31; bit >= 0; --bit) text.push_back(((v >> bit) & 1u) ? '1' : '0');
    text.push_back('\n');
  }
  out.write(text);
}

}  // namespace fmtcheck::cli
