// The host side of `hw gemm`, without a GPU: what cuBLASLt is asked for is
// checked before any device use, the emulated side applies the scales and
// the e4m3 output as worked out by hand, and differences name their inputs.
#include <doctest/doctest.h>

#include <bit>
#include <stdexcept>

#include "fmtcheck/cuda/blaslt_gemm.hpp"

using namespace fmtcheck;
using namespace fmtcheck::cuda;

namespace {

GemmOperands zeros(std::size_t m, std::size_t n, std::size_t k) {
  GemmOperands x;
  x.m = m;
  x.n = n;
  x.k = k;
  x.a.assign(m * k, 0);
  x.b.assign(k * n, 0);
  x.c.assign(m * n, 0.0f);
  return x;
}

BlasLtGemm fp8(const Format& out = formats::fp32) {
  BlasLtGemm g;
  g.input = &formats::e4m3;
  g.output = &out;
  return g;
}

}  // namespace

TEST_CASE("check_gemm: only what cuBLASLt has, sizes and words that fit") {
  const GemmOperands x = zeros(4, 4, 16);
  BlasLtGemm g;  // fp16 -> fp32
  CHECK_NOTHROW(check_gemm(g, x));
  g.fast_accum = true;  // FP8 only
  CHECK_THROWS_AS(check_gemm(g, x), std::invalid_argument);
  g = {};
  g.scale_a = 2;  // FP8 only
  CHECK_THROWS_AS(check_gemm(g, x), std::invalid_argument);
  g = {};
  g.output = &formats::e4m3;  // fp16 cannot write e4m3
  CHECK_THROWS_AS(check_gemm(g, x), std::invalid_argument);
  g = {};
  g.input = &formats::e5m2;  // no e5m2 x e5m2 GEMM in cuBLASLt
  CHECK_THROWS_AS(check_gemm(g, x), std::invalid_argument);
  g.input = &formats::fp32;
  CHECK_THROWS_AS(check_gemm(g, x), std::invalid_argument);

  BlasLtGemm e = fp8();
  e.fast_accum = true;
  e.scale_a = 0.5f;
  CHECK_NOTHROW(check_gemm(e, x));
  e.scale_d = 2;  // D scale needs an e4m3 D
  CHECK_THROWS_AS(check_gemm(e, x), std::invalid_argument);
  CHECK_NOTHROW(check_gemm(fp8(formats::e4m3), x));
  CHECK_THROWS_AS(check_gemm(fp8(), zeros(4, 4, 8)), std::invalid_argument);  // FP8: K a multiple of 16
  CHECK_THROWS_AS(check_gemm(fp8(), zeros(0, 4, 16)), std::invalid_argument);

  GemmOperands bad = x;
  bad.c.pop_back();
  CHECK_THROWS_AS(check_gemm(BlasLtGemm{}, bad), std::invalid_argument);
  bad = x;
  bad.a[3] = 0x100;  // wider than e4m3
  CHECK_THROWS_AS(check_gemm(fp8(), bad), std::invalid_argument);
  CHECK_NOTHROW(check_gemm(BlasLtGemm{}, bad));  // fits fp16
  // run_blaslt_gemm checks before it looks for a device.
  CHECK_THROWS_AS(run_blaslt_gemm(fp8(), bad), std::invalid_argument);
}

TEST_CASE("promotion intervals tried when FAST_ACCUM is off") {
  CHECK(promotion_candidates(256) == std::vector<std::size_t>{32, 64, 128, 256});
  CHECK(promotion_candidates(32) == std::vector<std::size_t>{32});
  CHECK(promotion_candidates(16) == std::vector<std::size_t>{16});
}

TEST_CASE("emulated cuBLASLt GEMM: scales, C and the e4m3 output worked by hand") {
  // A[0][0] = 1.5 (0x3c), A[1][0] = 1.5, B[0][0] = 3 (0x44), B[0][1] = 1 (0x38);
  // scale_a * scale_b = 0.5 * 4 = 2.
  GemmOperands x = zeros(2, 2, 16);
  x.a[0 * 16 + 0] = 0x3C;
  x.a[1 * 16 + 0] = 0x3C;
  x.b[0 * 2 + 0] = 0x44;
  x.b[0 * 2 + 1] = 0x38;
  x.c = {0.25f, -1.0f, 0.0f, 0.5f};
  BlasLtGemm g = fp8();
  g.scale_a = 0.5f;
  g.scale_b = 4.0f;
  const DotModel model = *find_tensor_core_model("hopper-wgmma")->for_input(formats::e4m3);
  // fp32 D = 2 * A·B + C: 9 + 0.25, 3 - 1, 9 + 0, 3 + 0.5.
  const std::vector<std::uint32_t> d = emulate_blaslt_gemm(g, model, 0, x);
  CHECK(d == std::vector<std::uint32_t>{std::bit_cast<std::uint32_t>(9.25f), std::bit_cast<std::uint32_t>(2.0f),
                                         std::bit_cast<std::uint32_t>(9.0f), std::bit_cast<std::uint32_t>(3.5f)});
  // e4m3 D = e4m3(64 * 2 * A·B), C not added: 576 saturates to 448 (0x7e);
  // 192 = 1.5 * 2^7 is 0x74.
  g.output = &formats::e4m3;
  g.scale_d = 64.0f;
  CHECK(emulate_blaslt_gemm(g, model, 0, x) == std::vector<std::uint32_t>{0x7E, 0x74, 0x7E, 0x74});
}

TEST_CASE("GEMM operands are valid and reproducible; differences name row, column and inputs") {
  for (const Format* in : {&formats::fp16, &formats::bf16, &formats::tf32, &formats::e4m3}) {
    CAPTURE(in->name);
    BlasLtGemm g;
    g.input = in;
    const GemmOperands x = make_gemm_operands(g, 8, 4, 32, 7);
    CHECK_NOTHROW(check_gemm(g, x));
    CHECK(make_gemm_operands(g, 8, 4, 32, 7).a == x.a);
    CHECK(make_gemm_operands(g, 8, 4, 32, 8).a != x.a);
    if (*in == formats::tf32) {
      for (const std::uint32_t w : x.a) CHECK((w & 0x1FFF) == 0);
    }
  }
  GemmOperands x = zeros(2, 3, 16);
  x.a[1 * 16 + 2] = 0x38;
  const std::vector<std::uint32_t> emulated(6, 0);
  std::vector<std::uint32_t> hardware = emulated;
  hardware[1 * 3 + 2] = 0x3F800000;
  const Comparison c = compare_gemm(fp8(), x, hardware, emulated, "test");
  CHECK(c.compared == 6);
  REQUIRE(c.kept.size() == 1);
  CHECK(c.kept[0].inputs.starts_with("row 1 col 2: a = 00 00 38 00"));
  CHECK(c.kept[0].inputs.ends_with("; c = 00000000"));
  CHECK_THROWS_AS(compare_gemm(fp8(), x, {}, emulated, "test"), std::invalid_argument);
}
