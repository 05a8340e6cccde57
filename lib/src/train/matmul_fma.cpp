// matmul_fma (exact_math.hpp): every element of C its own chain of fused
// multiply-adds over k in order. The chains of neighbouring columns are
// independent, so one vector holds several columns' accumulators, lane by
// lane the scalar chain: the same bits at SIMD speed. Only targets with a
// fused multiply-add take the vector path (HWY_NATIVE_FMA: Highway's MulAdd
// elsewhere multiplies and adds, two roundings); the others run std::fma.
//
// Highway compiles this file once per x86-64 level (foreach_target.h) and
// HWY_DYNAMIC_DISPATCH picks the best one the CPU has.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "train/matmul_fma.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/aligned_allocator.h>
#include <hwy/highway.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "core/parallel.hpp"
#include "fmtcheck/train/exact_math.hpp"

HWY_BEFORE_NAMESPACE();
namespace fmtcheck::train::detail {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Multiply-adds a thread takes on at least: a vector FMA costs well under a
// nanosecond per element, so about a millisecond's worth.
constexpr std::size_t products_per_thread = std::size_t{1} << 22;

void MatmulFma(const float* a, const float* b, std::size_t m, std::size_t n, std::size_t k, float* c) {
  const unsigned threads = fmtcheck::detail::threads_for(std::uint64_t{m} * n * std::max<std::size_t>(k, 1),
                                                         products_per_thread);
#if HWY_NATIVE_FMA
  const hn::ScalableTag<float> d;
  const std::size_t lanes = hn::Lanes(d), width = 2 * lanes;  // columns of one panel: two vectors
  const std::size_t panels = (n + width - 1) / width;
  // B packed into panels of `width` columns, each k x width and contiguous,
  // so that the inner loop over k reads consecutive vectors; columns past n
  // are zero (their outputs are not stored).
  auto packed = hwy::AllocateAligned<float>(std::max<std::size_t>(panels * k * width, 1));
  std::fill_n(packed.get(), panels * k * width, 0.0f);
  for (std::size_t j = 0; j < n; ++j) {
    float* column = packed.get() + (j / width) * k * width + j % width;
    for (std::size_t p = 0; p < k; ++p) column[p * width] = b[j * k + p];
  }
  // One item: four rows of A against one panel, eight accumulators held in
  // registers (rows past m repeat the last row; their outputs are not stored).
  constexpr std::size_t block_rows = 4;
  const std::size_t row_blocks = (m + block_rows - 1) / block_rows;
  fmtcheck::detail::run_parallel(row_blocks * panels, threads, [&](std::uint64_t item) {
    const std::size_t i0 = item / panels * block_rows, j0 = item % panels * width;
    const float* panel = packed.get() + item % panels * k * width;
    const float* r0 = a + std::min(i0, m - 1) * k;
    const float* r1 = a + std::min(i0 + 1, m - 1) * k;
    const float* r2 = a + std::min(i0 + 2, m - 1) * k;
    const float* r3 = a + std::min(i0 + 3, m - 1) * k;
    auto c00 = hn::Zero(d), c01 = hn::Zero(d), c10 = hn::Zero(d), c11 = hn::Zero(d);
    auto c20 = hn::Zero(d), c21 = hn::Zero(d), c30 = hn::Zero(d), c31 = hn::Zero(d);
    for (std::size_t p = 0; p < k; ++p) {
      const auto b0 = hn::Load(d, panel + p * width), b1 = hn::Load(d, panel + p * width + lanes);
      const auto a0 = hn::Set(d, r0[p]), a1 = hn::Set(d, r1[p]), a2 = hn::Set(d, r2[p]), a3 = hn::Set(d, r3[p]);
      c00 = hn::MulAdd(a0, b0, c00), c01 = hn::MulAdd(a0, b1, c01);
      c10 = hn::MulAdd(a1, b0, c10), c11 = hn::MulAdd(a1, b1, c11);
      c20 = hn::MulAdd(a2, b0, c20), c21 = hn::MulAdd(a2, b1, c21);
      c30 = hn::MulAdd(a3, b0, c30), c31 = hn::MulAdd(a3, b1, c31);
    }
    const std::size_t columns = std::min(width, n - j0);
    float row[2 * hn::MaxLanes(d)];  // a panel's row, of which the first `columns` are C's
    const auto store = [&](std::size_t i, decltype(c00) lo, decltype(c00) hi) {
      if (i >= m) return;
      hn::StoreU(lo, d, row);
      hn::StoreU(hi, d, row + lanes);
      std::copy_n(row, columns, c + i * n + j0);
    };
    store(i0, c00, c01);
    store(i0 + 1, c10, c11);
    store(i0 + 2, c20, c21);
    store(i0 + 3, c30, c31);
  });
#else
  fmtcheck::detail::run_parallel(m, threads, [&](std::uint64_t i) {
    for (std::size_t j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (std::size_t p = 0; p < k; ++p) acc = std::fma(a[i * k + p], b[j * k + p], acc);
      c[i * n + j] = acc;
    }
  });
#endif
}

}  // namespace HWY_NAMESPACE
}  // namespace fmtcheck::train::detail
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace fmtcheck::train {
namespace detail {
HWY_EXPORT(MatmulFma);
}  // namespace detail

std::vector<float> matmul_fma(std::span<const float> a, std::span<const float> b, std::size_t m, std::size_t n,
                              std::size_t k) {
  std::vector<float> c(m * n);
  if (m != 0 && n != 0) HWY_DYNAMIC_DISPATCH(detail::MatmulFma)(a.data(), b.data(), m, n, k, c.data());
  return c;
}

}  // namespace fmtcheck::train
#endif  // HWY_ONCE
