// float32 arithmetic of the training emulator that the C library does not
// pin down: exp and log correctly rounded (any libm's float exp may differ in
// the last bit), and matrix products as a chain of fused multiply-adds in a
// fixed order. Every other float32 operation of the trainer is one IEEE
// operation (+, -, *, /, sqrt), compiled with -ffp-contract=off so nothing is
// fused that the reference does not fuse.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace fmtcheck::train {

// e^x and ln(x) rounded once to the nearest float32 (ties to even).
float exp_f32(float x);
float log_f32(float x);

// C (m×n) = A·Bᵀ, A m×k and B n×k row-major; each element is
// acc = fma(a[k], b[k], acc) for k = 0, 1, ... from acc = +0 (a GPU's SGEMM
// inner loop, one rounding per k). Computed with the CPU's vector FMAs, one
// lane per element, on as many threads as its size repays (matmul_fma.cpp):
// each element's chain is the same, so the bits are too.
std::vector<float> matmul_fma(std::span<const float> a, std::span<const float> b, std::size_t m, std::size_t n,
                              std::size_t k);

// rows×cols → cols×rows.
template <typename T>
std::vector<T> transpose(std::span<const T> x, std::size_t rows, std::size_t cols) {
  std::vector<T> t(x.size());
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < cols; ++c) t[c * rows + r] = x[r * cols + c];
  }
  return t;
}

// Column sums of a rows×cols matrix in float32, rows added in order.
std::vector<float> column_sums(std::span<const float> x, std::size_t rows, std::size_t cols);

}  // namespace fmtcheck::train
