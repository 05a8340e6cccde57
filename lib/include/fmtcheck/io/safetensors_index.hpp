// Sharded Hugging Face checkpoints: a `*.safetensors.index.json` whose
// "weight_map" names, for each tensor, the safetensors shard (a file beside
// the index) that holds it. Opening one checks the index against every shard
// before any value is read: each shard exists and is a valid safetensors
// file, each tensor the index lists is in the shard it names, and no tensor
// is in two shards.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "fmtcheck/io/tensor_io.hpp"

namespace fmtcheck {

struct Checkpoint {
  std::string index_path;  // the index file (inside the folder when a folder was given)
  // One per shard, in the order of the shard file names (model-00001-of-00004
  // first); each lists the floating-point tensors of its shard in the order
  // the data lies, and its path() is the shard's path.
  std::vector<std::unique_ptr<TensorFile>> shards;
};

// True for a path ending in ".safetensors.index.json", or a folder holding
// "model.safetensors.index.json".
bool is_checkpoint(const std::string& path);

// Opens a checkpoint; with `only`, just the shards with those file names
// (each must be one the index names). Throws TensorFileError naming the file
// and the problem.
Checkpoint open_checkpoint(const std::string& path, const std::vector<std::string>& only = {});

}  // namespace fmtcheck
