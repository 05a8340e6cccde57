// NumPy .npy files, versions 1-3 (numpy/lib/format.py): magic "\x93NUMPY",
// version, a little-endian header length (2 bytes in v1, 4 in v2/v3), then a
// Python dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...)}.
#include <filesystem>
#include <regex>

#include "io/binary_tensor_file.hpp"

namespace fmtcheck {
namespace {

using detail::fail;

// numpy's type string ("<f4", ">f2", "|V2") -> storage format and byte order.
Format npy_format(const std::string& path, const std::string& descr, const ReadOptions& options, bool& big_endian) {
  if (descr.size() < 3) fail(path, "unsupported dtype '" + descr + "'");
  const char order = descr[0];
  if (order != '<' && order != '>' && order != '|' && order != '=') fail(path, "unsupported dtype '" + descr + "'");
  big_endian = order == '>';
  const std::string kind = descr.substr(1);
  if (kind == "f2") return formats::fp16;
  if (kind == "f4") return formats::fp32;
  if (kind == "f8") return formats::fp64;
  if (kind == "f1") return formats::e5m2;  // how numpy saves ml_dtypes.float8_e5m2
  if (kind == "V2" || kind == "V1") {
    if (options.dtype) {
      if (options.dtype->storage_bits != (kind == "V2" ? 16 : 8)) {
        fail(path, "--dtype " + options.dtype->name + " does not match the " + kind.substr(1) + "-byte dtype '" + descr + "'");
      }
      return *options.dtype;
    }
    if (kind == "V2") return formats::bf16;  // ml_dtypes.bfloat16, the only 2-byte ml_dtypes type
    fail(path, "dtype '" + descr + "' is a 1-byte ml_dtypes type numpy saved without its name: pass --dtype (e4m3, e4m3fnuz, e5m2fnuz, ...)");
  }
  fail(path, "unsupported dtype '" + descr + "' (expected f2, f4, f8 or an ml_dtypes bf16/fp8 type)");
}

std::vector<std::uint64_t> parse_shape(const std::string& path, const std::string& text) {
  std::vector<std::uint64_t> shape;
  static const std::regex dim(R"(\s*(\d+)\s*(,|$))");
  auto begin = std::sregex_iterator(text.begin(), text.end(), dim);
  std::size_t consumed = 0;
  for (auto it = begin; it != std::sregex_iterator(); ++it) {
    if (static_cast<std::size_t>(it->position()) != consumed) break;
    const auto d = detail::parse_uint64((*it)[1].str());
    if (!d) fail(path, "dimension " + (*it)[1].str() + " in the .npy header does not fit in 64 bits");
    shape.push_back(*d);
    consumed += static_cast<std::size_t>(it->length());
  }
  if (text.find_first_not_of(" ") != std::string::npos && consumed != text.size()) {
    fail(path, "malformed shape '(" + text + ")' in the .npy header");
  }
  return shape;
}

}  // namespace

std::unique_ptr<TensorFile> open_npy(const std::string& path, const ReadOptions& options) {
  auto file = std::make_unique<detail::BinaryTensorFile>(path);
  unsigned char prefix[12] = {};
  if (file->size() < 10) fail(path, "truncated: too short for a .npy header");
  file->read_at(0, prefix, 10);
  if (std::string(reinterpret_cast<char*>(prefix), 6) != "\x93NUMPY") fail(path, "not a .npy file (bad magic)");
  const int major = prefix[6];
  if (major < 1 || major > 3) fail(path, "unsupported .npy version " + std::to_string(major));
  std::uint64_t header_len = 0;
  std::uint64_t header_start = 10;
  if (major == 1) {
    header_len = prefix[8] | (prefix[9] << 8);
  } else {
    if (file->size() < 12) fail(path, "truncated: too short for a .npy header");
    file->read_at(0, prefix, 12);
    header_len = prefix[8] | (prefix[9] << 8) | (prefix[10] << 16) | (std::uint64_t{prefix[11]} << 24);
    header_start = 12;
  }
  if (header_len > file->size() - header_start) fail(path, "truncated: the header runs past the end of the file");
  // numpy's own limit (read_array_header's max_header_size); it also keeps
  // std::regex, which recurses once per character, within the stack.
  constexpr std::uint64_t max_header_bytes = 10000;
  if (header_len > max_header_bytes) {
    fail(path, "header of " + std::to_string(header_len) + " bytes is longer than numpy reads (" + std::to_string(max_header_bytes) + ")");
  }
  std::string header(header_len, '\0');
  file->read_at(header_start, header.data(), header_len);

  static const std::regex descr_re(R"('descr'\s*:\s*'([^']*)')");
  static const std::regex order_re(R"('fortran_order'\s*:\s*(True|False))");
  static const std::regex shape_re(R"('shape'\s*:\s*\(([^)]*)\))");
  std::smatch descr, order, shape;
  if (!std::regex_search(header, descr, descr_re)) fail(path, "malformed .npy header: no simple 'descr' (structured dtypes are not supported)");
  if (!std::regex_search(header, order, order_re)) fail(path, "malformed .npy header: no 'fortran_order'");
  if (!std::regex_search(header, shape, shape_re)) fail(path, "malformed .npy header: no 'shape'");

  TensorInfo info;
  info.name = std::filesystem::path(path).stem().string();
  bool big_endian = false;
  info.dtype = npy_format(path, descr[1], options, big_endian);
  info.shape = parse_shape(path, shape[1]);
  info.count = detail::element_count(path, info.shape);
  // Fortran order only permutes the elements; every measure but --block is
  // independent of order, and blocks follow the order on disk.
  const std::uint64_t data_start = header_start + header_len;
  const std::uint64_t expected = info.count * detail::element_bytes(info.dtype);
  if (file->size() - data_start != expected) {
    fail(path, "shape and size disagree: shape needs " + std::to_string(expected) + " bytes of data, the file has " +
                   std::to_string(file->size() - data_start));
  }
  file->add_tensor(std::move(info), data_start, big_endian);
  return file;
}

}  // namespace fmtcheck
