// The tensor-core data files `fmtcheck mma --check` reads: hex operand words
// (first byte even) or 32-digit binary lines (odd); every input is also read
// as a folder's instruction file. Bad text must give UsageError.
#include "common/tensor_core_files.hpp"
#include "common/usage_error.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fmtcheck;
  if (size == 0) return 0;
  const fuzz::InputFile file("input.txt", fuzz::text(data + 1, size - 1));
  try {
    if (data[0] % 2 == 0) {
      (void)cli::read_hex_words(file.path());
    } else {
      (void)cli::read_binary_lines(file.path());
    }
  } catch (const cli::UsageError&) {
  }
  try {
    (void)cli::read_instruction_file(file.path());
  } catch (const cli::UsageError&) {
  }
  return 0;
}
