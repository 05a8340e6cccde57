#include "common/bundled_data.hpp"

#include <filesystem>
#include <vector>

#include "common/usage_error.hpp"

// Paths from the executable's folder to the data folders, set by
// tools/CMakeLists.txt at configure time: relative, so that a prefix moved
// with `cmake --install --prefix` or a checkout moved with its build folder
// still finds them.
#if !defined(FMTCHECK_DATA_FROM_INSTALLED_BIN) || !defined(FMTCHECK_DATA_FROM_BUILD_BIN)
#error "tools/CMakeLists.txt defines FMTCHECK_DATA_FROM_INSTALLED_BIN and FMTCHECK_DATA_FROM_BUILD_BIN"
#endif

namespace fmtcheck::cli {

namespace fs = std::filesystem;

std::string bundled_data(const std::string& relative, const std::string& what) {
  // Linux's own link to the running executable: argv[0] may be a bare name
  // found on PATH, or relative to a folder the process has left.
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) {
    throw UsageError(what + " not given, and the bundled " + relative +
                     " cannot be looked for: this executable's location is unknown (/proc/self/exe: " + ec.message() +
                     "): pass " + what + " FILE");
  }
  std::vector<std::string> looked;
  for (const char* from_bin : {FMTCHECK_DATA_FROM_INSTALLED_BIN, FMTCHECK_DATA_FROM_BUILD_BIN}) {
    const fs::path folder = (exe.parent_path() / from_bin).lexically_normal();
    const fs::path candidate = folder / relative;
    if (std::error_code exists_ec; fs::is_regular_file(candidate, exists_ec)) return candidate.string();
    looked.push_back(folder.string());
  }
  std::string places;
  for (const std::string& p : looked) places += (places.empty() ? "" : " or ") + p;
  throw UsageError(what + " not given, and the bundled " + relative + " is not beside this fmtcheck (looked in " +
                   places + "): pass " + what + " FILE");
}

}  // namespace fmtcheck::cli
