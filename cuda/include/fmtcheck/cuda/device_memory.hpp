// The device fmtcheck computes on, and device memory it hands to callers:
// the arrays `import fmtcheck` makes for results on a GPU, which the
// caller's framework (torch, CuPy, JAX: any DLPack consumer) then owns.
#pragma once

#include <cstddef>

namespace fmtcheck::cuda {

// Makes GPU `ordinal` the current device of this thread (where the emulator's
// functions run; a DLPack array says which holds it).
void use_device(int ordinal);

// `bytes` of zeroed memory on the current device (cudaMalloc's alignment,
// 256 bytes). std::runtime_error naming the CUDA error where it fails.
void* allocate_zeroed(std::size_t bytes);

// Frees what allocate_zeroed returned (nullptr: nothing). Never throws: it
// runs where a framework drops its last reference to the array.
void release(void* memory) noexcept;

}  // namespace fmtcheck::cuda
