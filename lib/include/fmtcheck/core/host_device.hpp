// FMTCHECK_HD marks the functions of the rounding core that GPU kernels call
// as well as the CPU (cuda/src/emulator/): one definition for both, compiled
// by the C++ compiler as plain inline functions and by nvcc for host and
// device.
#pragma once

#if defined(__CUDACC__)
#define FMTCHECK_HD __host__ __device__
#else
#define FMTCHECK_HD
#endif

// Keeps a rare case out of its caller (a smaller frame on the common path),
// on the CPU and on the GPU.
#if defined(__CUDACC__)
#define FMTCHECK_NOINLINE __noinline__
#else
#define FMTCHECK_NOINLINE [[gnu::noinline]]
#endif
