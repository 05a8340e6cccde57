// fmtcheck's tensor analysis (analysis/tensor_analysis.hpp) of float32
// values already in GPU memory: a checkpoint loaded there, a live torch
// tensor. The library decides what each read of the tensor measures
// (analyze_passes, as for a file on the CPU); here each read is a few
// kernels, with the library's rounding and per-value measures compiled for
// the device (value_measures.hpp).
#pragma once

#include <cstddef>
#include <span>

#include "fmtcheck/analysis/tensor_analysis.hpp"

namespace fmtcheck::cuda {

// analyze_tensor's result for the n float32 values at device address
// `values`, on the current device. Counts, amax, the binade histogram and
// the largest errors equal the CPU's; the mean and RMS relative errors are
// sums taken in another order, equal to the CPU's within their rounding
// (relative 1e-10). Formats of at most 32 bits. Throws std::invalid_argument
// for what the CPU refuses and for a wider format, std::runtime_error on
// CUDA errors (no GPU among them).
TensorAnalysis analyze_on_gpu(const float* values, std::size_t n, const AnalysisSettings& settings);

// The same for host values, copied to the device (`fmtcheck analyze --device cuda`).
TensorAnalysis analyze_values_on_gpu(std::span<const float> values, const AnalysisSettings& settings);

}  // namespace fmtcheck::cuda
