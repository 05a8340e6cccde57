// cuBLASLt is opened on first use (cuda/src/blaslt_loader.cpp), no GPU
// needed: a library that is not there and one without the functions are
// named in the error `hw gemm` prints, and this toolkit's own library has
// every function blaslt_gemm.cpp calls.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "blaslt_loader.hpp"

using fmtcheck::cuda::detail::BlasLt;
using fmtcheck::cuda::detail::blaslt;
using fmtcheck::cuda::detail::load_blaslt;

namespace {

std::string load_error(const char* library) {
  try {
    load_blaslt(library);
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
