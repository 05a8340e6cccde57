// The GPU from Python: arrays in CUDA memory (torch, CuPy: any DLPack
// producer) handed to the emulator compiled for the GPU (cuda/src/emulator/)
// where this extension was built with CUDA.
#pragma once

#include <nanobind/ndarray.h>

#include <string>

namespace fmtcheck::python {

namespace nb = nanobind;

using CudaArray = nb::ndarray<nb::ro, nb::c_contig, nb::device::cuda>;
using CudaOutArray = nb::ndarray<nb::c_contig, nb::device::cuda>;

// Makes GPU `ordinal` current; std::invalid_argument ("device='cuda': no GPU
// found: ...", "... built without CUDA") where there is none to use.
void use_gpu(int ordinal);

}  // namespace fmtcheck::python
