// The safetensors reader (header length, JSON header, dtypes, shapes,
// data_offsets) on arbitrary bytes; a bad file must give TensorFileError.
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fmtcheck::fuzz::read_tensor_file("input.safetensors", data, size,
                                   [](const std::string& path) { return fmtcheck::open_safetensors(path, {}); });
  return 0;
}
