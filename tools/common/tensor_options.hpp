// Options for reading tensor files, shared by analyze and scale.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <regex>
#include <string>

#include "fmtcheck/io/tensor_io.hpp"

namespace fmtcheck::cli {

struct ReadArgs {
  std::string dtype;  // raw files and void-typed .npy
  std::string shape;  // "1024,768"
  std::string column;
};

void add_read_options(CLI::App& sub, ReadArgs& args);
ReadOptions to_read_options(const ReadArgs& args);
// open_tensor_file, with its errors turned into UsageError.
std::unique_ptr<TensorFile> open_tensors(const std::string& path, const ReadOptions& options);
// --tensors REGEX: nullopt when empty (every tensor), UsageError when malformed.
std::optional<std::regex> tensor_filter(const std::string& regex);

}  // namespace fmtcheck::cli
