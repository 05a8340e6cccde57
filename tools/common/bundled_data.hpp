// The data sets that come with fmtcheck (the checkout's data/, installed as
// share/fmtcheck/data), found beside the running executable rather than in
// the current folder, so that a model's own data needs no --data from
// wherever the command runs.
#pragma once

#include <string>

namespace fmtcheck::cli {

// The path of `relative` ("digits/digits.csv.gz") in the first data folder
// beside this executable that holds it: the installed one
// (<prefix>/share/fmtcheck/data, from <prefix>/bin), then the checkout's
// data/ as seen from the build folder the executable was built in. Otherwise
// UsageError: "<what> not given, and the bundled ... is not beside this
// fmtcheck (looked in <the folders>): pass <what> FILE".
std::string bundled_data(const std::string& relative, const std::string& what);

}  // namespace fmtcheck::cli
