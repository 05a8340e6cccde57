// The .npy reader (header, dtype, shape, data size) on arbitrary bytes.
// Expected outcome of a bad file: TensorFileError; anything else is a finding.
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fmtcheck::fuzz::read_tensor_file("input.npy", data, size,
                                   [](const std::string& path) { return fmtcheck::open_npy(path, {}); });
  return 0;
}
