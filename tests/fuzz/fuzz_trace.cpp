// Scale traces: the first byte chooses a manifest or a folder. A manifest
// is the rest of the input, beside two step files that exist; a folder is
// filled with empty files named by the input's lines. Listing must succeed
// or give UsageError; each listed file's tensor name must be computable.
#include "common/trace_steps.hpp"
#include "common/usage_error.hpp"
#include "fuzz_input.hpp"

namespace fs = std::filesystem;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fmtcheck::fuzz::write_file(fmtcheck::fuzz::scratch() / "step_0000.npy", "");
  fmtcheck::fuzz::write_file(fmtcheck::fuzz::scratch() / "step_0001_fc1.npy", "");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fmtcheck;
  if (size == 0) return 0;
  const std::string_view rest = fuzz::text(data + 1, size - 1);
  std::vector<cli::TraceStep> steps;
  if (data[0] % 2 == 0) {
    const fuzz::InputFile manifest("manifest.txt", rest);
    try {
      steps = cli::list_trace(manifest.path());
    } catch (const cli::UsageError&) {
    }
  } else {
    const fs::path dir = fuzz::scratch() / "trace";
    fs::remove_all(dir);
    fs::create_directory(dir);
    std::size_t start = 0;
    while (start <= rest.size()) {
      const std::size_t end = std::min(rest.find('\n', start), rest.size());
      const std::string name(rest.substr(start, end - start));
      // File names only: no folders, no NUL, not . or .., within NAME_MAX.
      if (!name.empty() && name.size() < 200 && name.find_first_of(std::string("/\0", 2)) == std::string::npos &&
          name != "." && name != "..") {
        fuzz::write_file(dir / name, "");
      }
      start = end + 1;
    }
    try {
      steps = cli::list_trace(dir.string());
    } catch (const cli::UsageError&) {
    }
  }
  for (const cli::TraceStep& step : steps) {
    for (const std::string& file : step.files) (void)cli::trace_tensor_name(file, "t");
  }
  return 0;
}
