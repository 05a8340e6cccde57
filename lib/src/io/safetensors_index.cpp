// The index of a sharded checkpoint (see safetensors_index.hpp): read the
// weight map, open each shard with the safetensors reader, and check that
// the shards hold exactly the tensors the index assigns to them.
#include "fmtcheck/io/safetensors_index.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "io/binary_tensor_file.hpp"

namespace fmtcheck {
namespace {

namespace fs = std::filesystem;
using detail::fail;

constexpr const char* index_suffix = ".safetensors.index.json";
constexpr const char* index_in_folder = "model.safetensors.index.json";

std::string index_file(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec) ? (fs::path(path) / index_in_folder).string() : path;
}

// tensor name -> shard file name, as the index says.
std::map<std::string, std::string> weight_map(const std::string& index) {
  std::ifstream in(index, std::ios::binary);
  if (!in) fail(index, "cannot open the checkpoint index");
  std::ostringstream text;
  text << in.rdbuf();
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::exception& e) {
    fail(index, std::string("malformed checkpoint index: ") + e.what());
  }
  if (!j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object()) {
    fail(index, "malformed checkpoint index: no \"weight_map\" object");
  }
  std::map<std::string, std::string> map;
  for (const auto& [tensor, shard] : j["weight_map"].items()) {
    if (!shard.is_string()) fail(index, "malformed checkpoint index: the shard of tensor '" + tensor + "' is not a string");
    const std::string name = shard.get<std::string>();
    // Shards lie beside the index: a name with a folder in it is refused rather than followed.
    if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") {
      fail(index, "tensor '" + tensor + "': shard name '" + name + "' is not a file name");
    }
    map.emplace(tensor, name);
  }
  if (map.empty()) fail(index, "the checkpoint index lists no tensors");
  return map;
}

}  // namespace

bool is_checkpoint(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return fs::is_regular_file(fs::path(path) / index_in_folder, ec);
  const std::string suffix = index_suffix;
  return path.size() >= suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Checkpoint open_checkpoint(const std::string& path, const std::vector<std::string>& only) {
  Checkpoint checkpoint;
  checkpoint.index_path = index_file(path);
  const std::string& index = checkpoint.index_path;
  const auto map = weight_map(index);
  std::set<std::string> shard_names;
  for (const auto& [tensor, shard] : map) shard_names.insert(shard);
  for (const std::string& name : only) {
    if (shard_names.count(name) == 0) fail(index, "the index names no shard '" + name + "'");
  }
  const fs::path folder = fs::path(index).parent_path();
  // Every shard is opened, even those left out by `only`, so that a tensor
  // in two shards is found whichever shards are analysed.
  std::vector<std::pair<std::string, std::unique_ptr<TensorFile>>> files;
  std::map<std::string, std::string> seen_in;  // tensor -> the first shard whose header holds it
  for (const std::string& name : shard_names) {
    const std::string shard_path = (folder / name).string();
    std::error_code ec;
    if (!fs::exists(shard_path, ec)) fail(index, "shard '" + name + "' is missing (no file " + shard_path + ")");
    files.emplace_back(name, open_safetensors(shard_path, {}));
    const TensorFile& file = *files.back().second;
    std::vector<std::string> held;
    for (const TensorInfo& t : file.tensors()) held.push_back(t.name);
    held.insert(held.end(), file.skipped().begin(), file.skipped().end());
    for (const std::string& tensor : held) {
      const auto [it, fresh] = seen_in.emplace(tensor, name);
      if (!fresh) fail(index, "tensor '" + tensor + "' is in two shards: " + it->second + " and " + name);
    }
  }
  for (const auto& [tensor, shard] : seen_in) {
    const auto listed = map.find(tensor);
    if (listed == map.end()) fail(index, "tensor '" + tensor + "' of shard " + shard + " is not in the index");
    if (listed->second != shard) fail(index, "tensor '" + tensor + "' is in shard " + shard + " but the index names " + listed->second);
  }
  for (const auto& [tensor, shard] : map) {
    if (seen_in.count(tensor) == 0) fail(index, "tensor '" + tensor + "' is listed for shard " + shard + " but is not in it");
  }
  for (auto& [name, file] : files) {
    if (only.empty() || std::find(only.begin(), only.end(), name) != only.end()) checkpoint.shards.push_back(std::move(file));
  }
  return checkpoint;
}

}  // namespace fmtcheck
