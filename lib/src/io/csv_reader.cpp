// One numeric column of a CSV file with a header row. Each cell is rounded
// to float32 exactly once by the library's decimal parser (never through
// double, which could round twice). The file is parsed once when opened,
// so a malformed cell is reported before any output, and streamed again
// for each pass over the values.
#include <bit>
#include <filesystem>
#include <fstream>

#include "fmtcheck/core/convert.hpp"
#include "io/binary_tensor_file.hpp"

namespace fmtcheck {
namespace {

using detail::fail;

// RFC 4180 fields of one line (quoted fields may hold commas and "" quotes;
// a line break inside quotes is not supported).
std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else if (c != '\r') {
      fields.back() += c;
    }
  }
  return fields;
}

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

class CsvTensorFile final : public TensorFile {
 public:
  CsvTensorFile(const std::string& path, const ReadOptions& options) : TensorFile(path) {
    std::ifstream in = open();
    std::string line;
    if (!std::getline(in, line)) fail(path, "empty CSV file (expected a header row)");
    const std::vector<std::string> header = split_csv_line(line);
    column_ = find_column(header, options.column);
    TensorInfo info;
    info.name = trim(header[column_]);
    info.dtype = formats::fp32;
    info.count = 0;
    for_each_value(in, [&](float) { ++info.count; });
    info.shape = {info.count};
    tensors_.push_back(std::move(info));
  }

  // Parsing is sequential, so chunks come in order from this thread whatever `threads` says.
  void for_each_chunk(std::size_t index, std::size_t chunk_size, const std::function<void(const TensorChunk&)>& consume,
                      unsigned /*threads*/) const override {
    (void)tensors_.at(index);
    std::ifstream in = open();
    std::string header;
    std::getline(in, header);
    std::vector<float> chunk;
    chunk.reserve(chunk_size);
    std::uint64_t first = 0;
    const auto flush = [&] {
      consume({first, std::span<const float>(chunk)});
      first += chunk.size();
      chunk.clear();
    };
    for_each_value(in, [&](float v) {
      chunk.push_back(v);
      if (chunk.size() == chunk_size) flush();
    });
    if (!chunk.empty()) flush();
  }

 private:
  std::size_t column_ = 0;

  std::ifstream open() const {
    // A folder opens as a stream that merely reads nothing: refuse it by name.
    if (std::error_code ec; std::filesystem::exists(path_, ec) && !std::filesystem::is_regular_file(path_, ec)) {
      fail(path_, "not a regular file");
    }
    std::ifstream in(path_, std::ios::binary);
    if (!in) fail(path_, "cannot open for reading");
    return in;
  }

  std::size_t find_column(const std::vector<std::string>& header, const std::string& wanted) const {
    if (wanted.empty()) return 0;
    for (std::size_t i = 0; i < header.size(); ++i) {
      if (trim(header[i]) == wanted) return i;
    }
    if (const auto i = detail::parse_uint64(wanted); i && *i < header.size()) return static_cast<std::size_t>(*i);
    fail(path_, "no column '" + wanted + "' in the header");
  }

  // Data rows after the header; blank lines are skipped, every other row must
  // hold a number in the column.
  template <typename F>
  void for_each_value(std::ifstream& in, F&& f) const {
    std::string line;
    for (std::uint64_t line_no = 2; std::getline(in, line); ++line_no) {
      if (trim(line).empty()) continue;
      const std::vector<std::string> fields = split_csv_line(line);
      const std::string where = "line " + std::to_string(line_no);
      if (column_ >= fields.size()) fail(path_, where + ": has " + std::to_string(fields.size()) + " fields, column " + std::to_string(column_) + " is missing");
      const std::string cell = trim(fields[column_]);
      if (cell.empty()) fail(path_, where + ": empty cell");
      Conversion c;
      try {
        c = convert_text(cell, formats::fp32);
      } catch (const std::invalid_argument&) {
        fail(path_, where + ": '" + cell + "' is not a number");
      }
      f(std::bit_cast<float>(static_cast<std::uint32_t>(c.bits)));
    }
    if (in.bad()) fail(path_, "read error");
  }
};

}  // namespace

std::unique_ptr<TensorFile> open_csv(const std::string& path, const ReadOptions& options) {
  return std::make_unique<CsvTensorFile>(path, options);
}

}  // namespace fmtcheck
