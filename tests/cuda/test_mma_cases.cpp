// Case generation, the emulated side of `hw mma` and the model chosen per GPU.
#include <doctest/doctest.h>

#include <bit>

#include "fmtcheck/cuda/mma_cases.hpp"

using namespace fmtcheck;
using namespace fmtcheck::cuda;

TEST_CASE("the model standing for each instruction per architecture") {
  const MmaInstruction& f16 = *find_mma_instruction(formats::fp16, formats::fp32);
  const MmaInstruction& e4m3 = *find_mma_instruction(formats::e4m3, formats::fp16);
  CHECK(model_for(f16, 80).model->name == "ampere");
  CHECK(model_for(f16, 86).model->name == "ampere");
  CHECK(model_for(f16, 89).model->name == "ada");
  CHECK(model_for(f16, 90).model->name == "hopper");
  CHECK(model_for(f16, 90).known_gap.empty());
  CHECK(model_for(e4m3, 89).model->name == "ada");
  CHECK(model_for(e4m3, 90).model->name == "hopper");  // FP8 mma.sync through fp16 blocks
  CHECK(model_for(e4m3, 90).known_gap.empty());
  CHECK(model_for(f16, 100).model == nullptr);
  // wgmma: hopper-wgmma for every type, sm_90 only.
  for (const MmaInstruction& ins : mma_instructions()) {
    if (ins.family != MmaFamily::wgmma) continue;
    CAPTURE(ins.ptx);
    CHECK(model_for(ins, 90).model->name == "hopper-wgmma");
    CHECK(model_for(ins, 90).known_gap.empty());
    CHECK(model_for(ins, 89).model == nullptr);
  }
}

TEST_CASE("tiles are valid, reproducible and differ by seed and kind") {
  for (const MmaInstruction& ins : mma_instructions()) {
    CAPTURE(ins.ptx);
    for (const CaseKind kind : {CaseKind::random, CaseKind::powers, CaseKind::specials}) {
      const MmaTiles t = make_tiles(ins, kind, 3, 42);
      CHECK_NOTHROW(check_tiles(ins, t));
      CHECK(make_tiles(ins, kind, 3, 42).a == t.a);
      CHECK(make_tiles(ins, kind, 3, 43).a != t.a);
    }
  }
}

TEST_CASE("emulated D of a tile worked out by hand") {
  // fp16 -> fp32 under ampere: D[r][n] = sum_k A[r][k] B[k][n] + C[r][n] with
  // A[r][k] = 1 for k = r, B[k][n] = 2 for k = n, C = 0.5: D = 2.5 where
  // r = n < 8, 0.5 elsewhere. All exact, so any rounding gives these bits.
  const MmaInstruction& ins = *find_mma_instruction(formats::fp16, formats::fp32);
  MmaTiles t;
  t.count = 1;
  t.a.assign(16 * 16, 0);
  t.b.assign(8 * 16, 0);
  t.c.assign(128, std::bit_cast<std::uint32_t>(0.5f));
  for (int r = 0; r < 16; ++r) t.a[r * 16 + r] = 0x3C00;  // 1.0
  for (int n = 0; n < 8; ++n) t.b[n * 16 + n] = 0x4000;   // 2.0, column n holds B[.][n]
  const std::vector<std::uint32_t> d = emulate_tiles(ins, *find_tensor_core_model("ampere")->for_input(formats::fp16), t);
  for (int r = 0; r < 16; ++r) {
    for (int n = 0; n < 8; ++n) CHECK(d[r * 8 + n] == std::bit_cast<std::uint32_t>(r == n ? 2.5f : 0.5f));
  }
  std::vector<std::uint32_t> hw = d;
  hw[3 * 8 + 3] = std::bit_cast<std::uint32_t>(2.75f);
  const Comparison c = compare_tiles(ins, t, hw, d, "test");
  CHECK(c.compared == 128);
  REQUIRE(c.kept.size() == 1);
  CHECK(c.kept[0].inputs.starts_with("tile 0 row 3 col 3: a = 0000 0000 0000 3c00 0000"));
  CHECK(c.kept[0].inputs.ends_with("; c = 3f000000"));
}

TEST_CASE("emulated D of a wgmma tile: 64 rows, the row named in each difference") {
  // e4m3 -> fp32: A[r][k] = 1 for k = r % 32, B[k][n] = 0.5 for k = n, C = 0:
  // D = 0.5 where r % 32 = n, 0 elsewhere.
  const MmaInstruction& ins = *find_mma_instruction(formats::e4m3, formats::fp32, MmaFamily::wgmma);
  MmaTiles t;
  t.count = 2;
  t.a.assign(2 * 64 * 32, 0);
  t.b.assign(2 * 8 * 32, 0);
  t.c.assign(2 * 64 * 8, 0);
  for (int tile = 0; tile < 2; ++tile) {
    for (int r = 0; r < 64; ++r) t.a[(tile * 64 + r) * 32 + r % 32] = 0x38;  // 1.0
    for (int n = 0; n < 8; ++n) t.b[(tile * 8 + n) * 32 + n] = 0x30;          // 0.5
  }
  const std::vector<std::uint32_t> d =
      emulate_tiles(ins, *find_tensor_core_model("hopper-wgmma")->for_input(formats::e4m3), t);
  for (int i = 0; i < 2 * 64 * 8; ++i) {
    const int r = i / 8 % 64, n = i % 8;
    CHECK(d[i] == std::bit_cast<std::uint32_t>(r % 32 == n ? 0.5f : 0.0f));
  }
  std::vector<std::uint32_t> hw = d;
  hw[(64 + 40) * 8 + 5] = 1;  // tile 1, row 40, column 5
  const Comparison c = compare_tiles(ins, t, hw, d, "test");
  CHECK(c.compared == 2 * 512);
  REQUIRE(c.kept.size() == 1);
  CHECK(c.kept[0].inputs.starts_with("tile 1 row 40 col 5: a = 00 00 00 00 00 00 00 00 38"));
}
