// The device programs' first step: without a GPU, say why and exit 77, which
// ctest reports as skipped (and run-hardware-comparison.sh as the missing GPU).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include "fmtcheck/cuda/device.hpp"

inline void exit_unless_a_gpu() {
  std::string why;
  if (!fmtcheck::cuda::find_device(&why)) {
    std::printf("fmtcheck: no GPU found: %s\n", why.c_str());
    std::exit(77);
  }
}
