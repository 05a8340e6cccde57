// The safetensors reader (header length, JSON header, dtypes, shapes,
// data_offsets) on arbitrary bytes; a bad file must give TensorFileError.
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fmtcheck;
  const fuzz::InputFile file("input.safetensors", fuzz::text(data, size));
  try {
    fuzz::read_everything(*open_safetensors(file.path(), {}));
  } catch (const TensorFileError&) {
  }
  return 0;
}
