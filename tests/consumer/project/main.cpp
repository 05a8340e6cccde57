// The docs/library.md example: the bit-exact expected output of a small bf16
// GEMM with fp32 accumulation, and the flags it raised. Exits nonzero when an
// output differs from the values published in the docs (which were checked
// independently: a float std::fma loop on the same bf16 inputs gives the same
// bits and the same inexact/overflow exceptions).
#include <cstdio>
#include <fmtcheck/core/format.hpp>  // a layer's header on its own
#include <fmtcheck/fmtcheck.hpp>
#include <vector>

int main() {
  using fmtcheck::bfloat16;
  // A (2 x 3) and B (3 x 2), row-major; 0.1 and 1/3 are not bf16 values, so
  // the inputs round once on the way in.
  const std::vector<bfloat16> a = {bfloat16(0.1f), bfloat16(1.0f / 3), bfloat16(3e38f),
                                   bfloat16(-2.5f), bfloat16(1e-3f), bfloat16(7.0f)};
  const std::vector<bfloat16> b = {bfloat16(1.5f), bfloat16(-1.0f), bfloat16(3.0f),
                                   bfloat16(0.5f), bfloat16(2.0f), bfloat16(1e-40f)};
  std::vector<std::uint64_t> a_bits, b_bits;
  for (auto x : a) a_bits.push_back(x.bits());
  for (auto x : b) b_bits.push_back(x.bits());

  const fmtcheck::MatmulResult c =
      fmtcheck::matmul(fmtcheck::formats::bf16, a_bits, b_bits, 2, 3, 2, fmtcheck::formats::fp32,
                       fmtcheck::dot_kernel(fmtcheck::Accumulation::fp32));
  const std::uint64_t expected[] = {0x7f800000, 0x3dc18000, 0x41240c48, 0x40200830};
  int wrong = 0;
  for (int i = 0; i < 4; ++i) {
    std::printf("C[%d][%d] = 0x%08llx = %.9g\n", i / 2, i % 2, static_cast<unsigned long long>(c.c[i]),
                fmtcheck::to_double(fmtcheck::formats::fp32, c.c[i]));
    wrong += c.c[i] != expected[i];
  }
  std::printf("inexact in %llu of %llu outputs, overflow in %llu\n",
              static_cast<unsigned long long>(c.flags[fmtcheck::Flag::inexact]),
              static_cast<unsigned long long>(c.flags.values),
              static_cast<unsigned long long>(c.flags[fmtcheck::Flag::overflow]));
  return wrong == 0 ? 0 : 1;
}
