// Dot products and matrix products with a chosen accumulation, the
// expected output of a low-precision kernel bit for bit.
//
//   element  each product is rounded to the element format, then each sum
//            (what `T s{}; for (...) s += a[i] * b[i];` computes with a value type);
//   fp32     s = fma(a[i], b[i], s) rounded to fp32 at each step, in index
//            order (a GPU's FFMA loop; for inputs of at most 12 bits'
//            precision every product is exact in fp32, so it is also the
//            multiply-then-add loop);
//   exact    the exact sum (Boost.Multiprecision integers), rounded once;
//            infinities and NaNs follow IEEE for the exact sum of exact
//            products, in any input format (fp64 products never overflow).
// The result is then rounded into `out` (exact when out is the accumulation
// format or wider). A tensor-core model is another DotKernel
// (tensor_core_kernel() in tensor_core.hpp): matmul takes any kernel, so a
// model of a GPU's MMA plugs in without changing callers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "fmtcheck/core/flags.hpp"
#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/policy.hpp"
#include "fmtcheck/core/round_to_format.hpp"

namespace fmtcheck {

enum class Accumulation : std::uint8_t { element, fp32, exact };

// sum a[i] * b[i] for operands in format `in`, rounded into `out`; the flags
// are those of every rounding step.
using DotKernel = std::function<Conversion(const Format& in, std::span<const std::uint64_t> a,
                                           std::span<const std::uint64_t> b, const Format& out, const Policy& p)>;

DotKernel dot_kernel(Accumulation acc);

Conversion dot(const Format& in, std::span<const std::uint64_t> a, std::span<const std::uint64_t> b, const Format& out,
               Accumulation acc, const Policy& p = {});

struct MatmulResult {
  std::vector<std::uint64_t> c;  // m x n, row-major, container bits of `out`
  FlagCounts flags;              // per output element
};

// C = A * B with A m x k and B k x n, both row-major container bits of `in`;
// every C entry is one kernel call on a row of A and a column of B.
MatmulResult matmul(const Format& in, std::span<const std::uint64_t> a, std::span<const std::uint64_t> b,
                    std::size_t m, std::size_t k, std::size_t n, const Format& out, const DotKernel& kernel,
                    const Policy& p = {});

}  // namespace fmtcheck
