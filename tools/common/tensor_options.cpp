#include "common/tensor_options.hpp"

#include <charconv>
#include <sstream>

#include "common/command.hpp"
#include "common/options.hpp"
#include "fmtcheck/io/safetensors_index.hpp"

namespace fmtcheck::cli {

void add_read_options(CLI::App& sub, ReadArgs& args) {
  sub.add_option("--dtype", args.dtype, "element format of raw files (fp32, bf16, e4m3, ...) and of .npy files numpy saved as void (ml_dtypes)");
  sub.add_option("--shape", args.shape, "shape of raw files, e.g. 1024,768 (checked against the file size)");
  sub.add_option("--column", args.column, "CSV column: header name or 0-based index (default: the first)");
}

ReadOptions to_read_options(const ReadArgs& args) {
  ReadOptions options;
  if (!args.dtype.empty()) options.dtype = parse_format_option(args.dtype);
  if (!args.shape.empty()) {
    std::vector<std::uint64_t> shape;
    std::stringstream ss(args.shape);
    std::string item;
    while (std::getline(ss, item, ',')) {
      std::uint64_t size = 0;
      const auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), size);
      if (item.empty() || error != std::errc() || end != item.data() + item.size()) {
        throw UsageError("bad --shape '" + args.shape + "': expected sizes such as 1024,768" +
                         (error == std::errc::result_out_of_range ? " (" + item + " does not fit in 64 bits)" : ""));
      }
      shape.push_back(size);
    }
    options.shape = shape;
  }
  options.column = args.column;
  return options;
}

std::unique_ptr<TensorFile> open_tensors(const std::string& path, const ReadOptions& options) {
  try {
    return open_tensor_file(path, options);
  } catch (const TensorFileError& e) {
    throw UsageError(e.what());
  }
}

std::vector<InputFile> open_inputs(const std::vector<std::string>& paths, const std::vector<std::string>& shards,
                                   const ReadOptions& options) {
  std::vector<InputFile> inputs;
  bool checkpoint = false;
  for (const std::string& path : paths) {
    if (!is_checkpoint(path)) {
      inputs.push_back({"", open_tensors(path, options)});
      continue;
    }
    checkpoint = true;
    try {
      Checkpoint c = open_checkpoint(path, shards);
      for (auto& shard : c.shards) inputs.push_back({c.index_path, std::move(shard)});
    } catch (const TensorFileError& e) {
      throw UsageError(e.what());
    }
  }
  if (!shards.empty() && !checkpoint) throw UsageError("--shard needs a checkpoint index (*.safetensors.index.json or a folder holding one)");
  return inputs;
}

std::optional<std::regex> tensor_filter(const std::string& regex) {
  if (regex.empty()) return std::nullopt;
  try {
    return std::regex(regex);
  } catch (const std::regex_error& e) {
    throw UsageError("bad --tensors regex '" + regex + "': " + e.what());
  }
}

}  // namespace fmtcheck::cli
