// The sharded checkpoint index (model.safetensors.index.json): the input is
// the index, beside two valid shards (tensors "a" and "b" in the first, "c"
// in the second), so that weight maps naming, missing or doubling them are
// all reachable. A bad index must give TensorFileError.
#include <cstring>

#include "fmtcheck/io/safetensors_index.hpp"
#include "fuzz_input.hpp"

namespace {

// A safetensors file of one-element float32 tensors named `names`.
std::string shard(const std::vector<std::string>& names) {
  std::string header = "{";
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) header += ',';
    header += '"';
    header += names[i];
    header += "\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[";
    header += std::to_string(4 * i) + "," + std::to_string(4 * i + 4) + "]}";
  }
  header += "}";
  std::string out(8, '\0');
  for (int b = 0; b < 8; ++b) out[b] = static_cast<char>((header.size() >> (8 * b)) & 0xff);
  out += header;
  const float one = 1.0f;
  for (std::size_t i = 0; i < names.size(); ++i) out.append(reinterpret_cast<const char*>(&one), 4);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fmtcheck::fuzz::write_file(fmtcheck::fuzz::scratch() / "model-00001-of-00002.safetensors", shard({"a", "b"}));
  fmtcheck::fuzz::write_file(fmtcheck::fuzz::scratch() / "model-00002-of-00002.safetensors", shard({"c"}));
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fmtcheck;
  const fuzz::InputFile index("model.safetensors.index.json", fuzz::text(data, size));
  for (const std::vector<std::string>& only : {std::vector<std::string>{}, {"model-00001-of-00002.safetensors"}}) {
    try {
      for (const auto& s : open_checkpoint(fuzz::scratch().string(), only).shards) fuzz::read_everything(*s);
    } catch (const TensorFileError&) {
    }
  }
  return 0;
}
