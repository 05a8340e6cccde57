// safetensors (huggingface/safetensors, docs "Format"): an 8-byte
// little-endian header length N, N bytes of JSON mapping each tensor name to
// {dtype, shape, data_offsets: [begin, end]} relative to the byte after the
// header, then the data. Everything the header claims is checked against
// the file before any value is read.
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "io/binary_tensor_file.hpp"

namespace fmtcheck {
namespace {

using detail::fail;

std::optional<Format> float_dtype(const std::string& dtype) {
  static const std::map<std::string, Format> floats = {
      {"F64", formats::fp64}, {"F32", formats::fp32},      {"F16", formats::fp16},
      {"BF16", formats::bf16}, {"F8_E4M3", formats::e4m3}, {"F8_E5M2", formats::e5m2}};
  const auto it = floats.find(dtype);
  if (it == floats.end()) return std::nullopt;
  return it->second;
}

// Types safetensors defines that are not floating point: skipped, not errors,
// so a model file with integer buffers (position ids) can still be analysed.
bool known_non_float(const std::string& dtype) {
  static const char* const others[] = {"BOOL", "U8", "I8", "U16", "I16", "U32", "I32", "U64", "I64", "F8_E8M0", "F4", "F6_E2M3", "F6_E3M2"};
  return std::find(std::begin(others), std::end(others), dtype) != std::end(others);
}

constexpr std::uint64_t max_header_bytes = 100'000'000;  // the limit the reference implementation enforces

}  // namespace

std::unique_ptr<TensorFile> open_safetensors(const std::string& path, const ReadOptions&) {
  auto file = std::make_unique<detail::BinaryTensorFile>(path);
  if (file->size() < 8) fail(path, "truncated: too short for a safetensors header");
  unsigned char len_bytes[8];
  file->read_at(0, len_bytes, 8);
  std::uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | len_bytes[i];
  if (header_len > max_header_bytes) fail(path, "header length " + std::to_string(header_len) + " is implausible (not a safetensors file?)");
  if (header_len > file->size() - 8) fail(path, "truncated: the header runs past the end of the file");
  std::string text(header_len, '\0');
  file->read_at(8, text.data(), header_len);
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    fail(path, std::string("malformed safetensors header: ") + e.what());
  }
  if (!header.is_object()) fail(path, "malformed safetensors header: not a JSON object");

  const std::uint64_t data_start = 8 + header_len;
  const std::uint64_t data_size = file->size() - data_start;
  struct Span {
    std::uint64_t begin, end;
    std::string name;
  };
  std::vector<Span> spans;
  std::vector<std::pair<TensorInfo, std::uint64_t>> found;
  for (const auto& item : header.items()) {
    // Named copies, not structured bindings: a lambda cannot capture those before C++20 P1091 (clang 16).
    const std::string& name = item.key();
    const auto& entry = item.value();
    if (name == "__metadata__") continue;
    const auto bad = [&](const std::string& what) { fail(path, "tensor '" + name + "': " + what); };
    if (!entry.is_object() || !entry.contains("dtype") || !entry.contains("shape") || !entry.contains("data_offsets")) {
      bad("needs dtype, shape and data_offsets");
    }
    const auto& dtype = entry["dtype"];
    const auto& shape = entry["shape"];
    const auto& offsets = entry["data_offsets"];
    if (!dtype.is_string()) bad("dtype is not a string");
    if (!shape.is_array()) bad("shape is not a list");
    if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() || !offsets[1].is_number_unsigned()) {
      bad("data_offsets is not [begin, end]");
    }
    const auto begin = offsets[0].get<std::uint64_t>();
    const auto end = offsets[1].get<std::uint64_t>();
    if (begin > end || end > data_size) {
      bad("data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) + "] lie outside the " + std::to_string(data_size) + " data bytes (truncated?)");
    }
    spans.push_back({begin, end, name});
    const std::string type = dtype.get<std::string>();
    const auto format = float_dtype(type);
    if (!format) {
      if (!known_non_float(type)) bad("unknown dtype '" + type + "'");
      file->mark_skipped(name);
      continue;
    }
    TensorInfo info;
    info.name = name;
    info.dtype = *format;
    for (const auto& d : shape) {
      if (!d.is_number_unsigned()) bad("shape has a non-integer dimension");
      info.shape.push_back(d.get<std::uint64_t>());
    }
    info.count = detail::element_count(path + ": tensor '" + name + "'", info.shape);
    const std::uint64_t bytes = info.count * detail::element_bytes(*format);
    if (end - begin != bytes) {
      bad("shape and size disagree: shape needs " + std::to_string(bytes) + " bytes, data_offsets give " + std::to_string(end - begin));
    }
    found.emplace_back(std::move(info), data_start + begin);
  }
  // Tensors must not overlap (the format also requires them to cover the data contiguously).
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.begin < b.begin; });
  for (std::size_t i = 1; i < spans.size(); ++i) {
    if (spans[i].begin < spans[i - 1].end) fail(path, "tensors '" + spans[i - 1].name + "' and '" + spans[i].name + "' overlap");
  }
  // Report tensors in file order, as the data lies.
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  for (auto& [info, offset] : found) file->add_tensor(std::move(info), offset, false);
  return file;
}

}  // namespace fmtcheck
