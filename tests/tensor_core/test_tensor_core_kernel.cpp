// matmul with a tensor-core model as its DotKernel. The "exact" model sums
// the whole dot product exactly and rounds once to nearest even, so it must
// equal matmul's exact accumulation (Boost.Multiprecision integers, an
// independent summation); the Hopper model must differ from it somewhere on
// inputs whose products span more than its 25 fraction bits.
#include <doctest/doctest.h>

#include <random>
#include <stdexcept>
#include <vector>

#include "fmtcheck/arith/dot.hpp"
#include "fmtcheck/tensor_core/tensor_core.hpp"

using namespace fmtcheck;

namespace {

std::vector<std::uint64_t> random_bf16(std::size_t count, std::mt19937& rng) {
  std::uniform_int_distribution<int> exponent(127 - 20, 127 + 20);
  std::vector<std::uint64_t> out(count);
  for (auto& v : out) {
    const auto sign = static_cast<std::uint64_t>(rng() & 1) << 15;
    v = sign | static_cast<std::uint64_t>(exponent(rng)) << 7 | (rng() & 0x7F);
  }
  return out;
}

}  // namespace

TEST_CASE("matmul through the exact tensor-core model equals exact accumulation") {
  std::mt19937 rng(7);
  const std::size_t m = 6, k = 48, n = 5;
  const auto a = random_bf16(m * k, rng), b = random_bf16(k * n, rng);
  const MatmulResult model = matmul(formats::bf16, a, b, m, k, n, formats::fp32,
                                    tensor_core_kernel(*find_tensor_core_model("exact")));
  const MatmulResult exact = matmul(formats::bf16, a, b, m, k, n, formats::fp32, dot_kernel(Accumulation::exact));
  CHECK(model.c == exact.c);

  const MatmulResult hopper = matmul(formats::bf16, a, b, m, k, n, formats::fp32,
                                     tensor_core_kernel(*find_tensor_core_model("hopper")));
  CHECK(hopper.c != exact.c);  // 2^40 spread of magnitudes: truncation at 25 bits shows
}

TEST_CASE("the tensor-core kernel refuses outputs and inputs the instruction has not") {
  const std::vector<std::uint64_t> one{0x3F80};
  const DotKernel kernel = tensor_core_kernel(*find_tensor_core_model("hopper"));
  CHECK_THROWS_AS(kernel(formats::bf16, one, one, formats::bf16, Policy{}), std::invalid_argument);
  const std::vector<std::uint64_t> byte{0x38};
  CHECK_THROWS_AS(tensor_core_kernel(*find_tensor_core_model("ampere"))(formats::e4m3, byte, byte, formats::fp32, Policy{}),
                  std::invalid_argument);
}
