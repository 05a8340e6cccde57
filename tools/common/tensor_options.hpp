// Options for reading tensor files, shared by analyze and scale.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <vector>

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
// A tensor file to analyse, and the checkpoint it belongs to.
struct InputFile {
  std::string model;  // the checkpoint's index; empty for a file given by itself
  std::unique_ptr<TensorFile> file;
};
// The files of the paths, in order: a checkpoint index (or a folder holding
// one) gives its shards, restricted to `shards` when not empty (which then
// needs a checkpoint among the paths). Errors become UsageError.
std::vector<InputFile> open_inputs(const std::vector<std::string>& paths, const std::vector<std::string>& shards,
                                   const ReadOptions& options);
// --tensors REGEX: nullopt when empty (every tensor), UsageError when malformed.
std::optional<std::regex> tensor_filter(const std::string& regex);

}  // namespace fmtcheck::cli
