// The CSV column reader: the first byte chooses the --column asked for (the
// first column, an index, a header name, an index past the end), the rest is
// the file. A bad file must give TensorFileError.
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fmtcheck;
  if (size == 0) return 0;
  static const char* const columns[] = {"", "1", "x", "99999999999999999999999", "2"};
  ReadOptions options;
  options.column = columns[data[0] % 5];
  const fuzz::InputFile file("input.csv", fuzz::text(data + 1, size - 1));
  try {
    fuzz::read_everything(*open_csv(file.path(), options));
  } catch (const TensorFileError&) {
  }
  return 0;
}
