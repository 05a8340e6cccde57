// cuBLASLt is opened on first use (cuda/src/blaslt_loader.cpp), no GPU
// needed: a library that is not there and one without the functions are
// named in the error `hw gemm` prints, the fallback path is tried when the
// soname does not load, and this toolkit's own library has every function
// blaslt_gemm.cpp calls, by soname and by its absolute path.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "blaslt_loader.hpp"

using fmtcheck::cuda::detail::BlasLt;
using fmtcheck::cuda::detail::blaslt;
using fmtcheck::cuda::detail::load_blaslt;
using fmtcheck::cuda::detail::toolkit_blaslt_path;

namespace {

std::string load_error(const char* library, const char* fallback = nullptr) {
  try {
    load_blaslt(library, fallback);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(loaded)";
}

}  // namespace

TEST_CASE("a library that is not there is named") {
  const std::string why = load_error("libfmtcheck-no-such-library.so.1");
  CHECK(why.starts_with("cuBLASLt: cannot load libfmtcheck-no-such-library.so.1: "));
}

TEST_CASE("when the soname does not load, the fallback is tried; when neither does, both are named") {
  const std::string why = load_error("libfmtcheck-no-such-library.so.1", "/nonexistent/libfmtcheck-no-such-library.so.1");
  CHECK(why.starts_with("cuBLASLt: cannot load libfmtcheck-no-such-library.so.1: "));
  CHECK(why.find("; nor /nonexistent/libfmtcheck-no-such-library.so.1: ") != std::string::npos);
  // The fallback is the library the rest of the load reports on.
  CHECK(load_error("libfmtcheck-no-such-library.so.1", "libc.so.6") == "cuBLASLt: libc.so.6 has no cublasLtGetStatusString");
}

TEST_CASE("this toolkit's cuBLASLt loads by the absolute path found at configure time") {
  CHECK(std::string(toolkit_blaslt_path).starts_with("/"));
  const BlasLt api = load_blaslt("libfmtcheck-no-such-library.so.1", toolkit_blaslt_path);
  CHECK_FALSE(std::string(api.GetStatusString(CUBLAS_STATUS_SUCCESS)).empty());
}

TEST_CASE("a library without the functions: the first one missing is named") {
  // libc loads everywhere this builds and has no cuBLASLt function.
  CHECK(load_error("libc.so.6") == "cuBLASLt: libc.so.6 has no cublasLtGetStatusString");
}

TEST_CASE("this toolkit's cuBLASLt has every function, resolved once") {
  REQUIRE_NOTHROW(blaslt());  // the soname built in, found as hw gemm finds it
  const BlasLt& api = blaslt();
  CHECK(&api == &blaslt());
  CHECK_FALSE(std::string(api.GetStatusString(CUBLAS_STATUS_SUCCESS)).empty());  // callable, no GPU needed
}
