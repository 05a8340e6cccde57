// The CLI's one error type for bad input, apart from command.hpp, so that
// helpers which only report errors do not compile CLI11 (about 5 s of
// compiler time per file that includes it).
#pragma once

#include <stdexcept>

namespace fmtcheck::cli {

// Bad input from the user: printed as one line on stderr, exit code 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace fmtcheck::cli
