// The CLI's one error type for bad input, apart from command.hpp, so that
// helpers which only report errors do not compile CLI11 (about 5 s of
// compiler time per file that includes it).
#pragma once

#include <stdexcept>
#include <string>
#include <system_error>

namespace fmtcheck::cli {

// Bad input from the user: printed as one line on stderr, exit code 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Why the system refused to look a path up (a name longer than it allows,
// no permission), from the error code of a std::filesystem query; empty
// when the path simply does not exist or there was no error.
inline std::string lookup_refusal(const std::error_code& ec) {
  return ec && ec != std::errc::no_such_file_or_directory ? ec.message() : std::string();
}

}  // namespace fmtcheck::cli
