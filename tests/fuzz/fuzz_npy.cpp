// The .npy reader (header, dtype, shape, data size) on arbitrary bytes.
// Expected outcome of a bad file: TensorFileError; anything else is a finding.
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fmtcheck;
  const fuzz::InputFile file("input.npy", fuzz::text(data, size));
  try {
    fuzz::read_everything(*open_npy(file.path(), {}));
  } catch (const TensorFileError&) {
  }
  return 0;
}
