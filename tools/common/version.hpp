// The version `fmtcheck --version` prints, and that partial results record.
#pragma once

namespace fmtcheck::cli {

inline constexpr const char* fmtcheck_version = "fmtcheck 0.1.0";

}  // namespace fmtcheck::cli
