// Raw binary files read with --dtype and --shape: the input's first line is
// the --dtype text, its second the --shape text, the rest the file. The
// options go through the CLI's own parsing (to_read_options); bad options
// must give UsageError, a bad file TensorFileError.
#include "common/tensor_options.hpp"
#include "common/usage_error.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fmtcheck;
  std::string_view rest = fuzz::text(data, size);
  const auto line = [&rest] {
    const auto end = rest.find('\n');
    const std::string_view first = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    return std::string(first);
  };
  cli::ReadArgs args;
  args.dtype = line();
  args.shape = line();
  const fuzz::InputFile file("input.bin", rest);
  try {
    ReadOptions options = cli::to_read_options(args);
    if (!options.dtype) return 0;  // raw files need one; open_raw refuses without (a test of its own)
    fuzz::read_everything(*open_raw(file.path(), options));
  } catch (const cli::UsageError&) {
  } catch (const TensorFileError&) {
  }
  return 0;
}
