// doctest main for the tests that need a GPU: without one it prints why and
// exits 77, which ctest reports as skipped.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include "fmtcheck/cuda/device.hpp"

int main(int argc, char** argv) {
  std::string why;
  if (!fmtcheck::cuda::find_device(&why)) {
    std::printf("SKIPPED: no GPU found: %s\n", why.c_str());
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
