// cuBLASLt GEMMs measured on GPUs (docs/hardware/<gpu>/cases/gemm/), replayed
// through the emulated GEMM under the preset and promotion interval each file
// names: every output must match the hardware's bits. Also the file format:
// what gemm_cases_text writes, parse_gemm_cases reads back.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "committed_gemm_cases.hpp"
#include "fmtcheck/cuda/gemm_case_file.hpp"
#include "fmtcheck/tensor_core/tensor_core.hpp"

using namespace fmtcheck;
using namespace fmtcheck::cuda;
namespace fs = std::filesystem;

TEST_CASE("every committed cuBLASLt GEMM replays bit for bit") {
  std::size_t files = 0;
  for (const auto& [path, c] : committed_gemm_cases(source_path("docs/hardware"))) {
    CAPTURE(path.string());
    const TensorCoreModel* preset = find_tensor_core_model(c.model);
    REQUIRE(preset != nullptr);
    const std::vector<std::uint32_t> emulated =
        emulate_blaslt_gemm(c.gemm, *preset->for_input(*c.gemm.input), c.promote_every, c.x);
    std::size_t differ = 0;
    for (std::size_t i = 0; i < c.d.size(); ++i) differ += emulated[i] != c.d[i];
    CHECK(differ == 0);
    CHECK(c.d.size() == 1024);
    if (c.promote_every != 0) {
      // The interval is what the data says: half of it does not explain the block.
      const std::vector<std::uint32_t> half =
          emulate_blaslt_gemm(c.gemm, *preset->for_input(*c.gemm.input), c.promote_every / 2, c.x);
      CHECK(half != c.d);
    }
    ++files;
  }
  CHECK(files >= 8);  // the H100 run: fp16, bf16, tf32 and five e4m3 GEMMs
}

TEST_CASE("GEMM case files: the block, the text and its errors") {
  BlasLtGemm g;
  g.input = &formats::e4m3;
  g.fast_accum = true;
  g.scale_a = 0.5f;
  const GemmOperands x = make_gemm_operands(g, 4, 3, 32, 7);
  std::vector<std::uint32_t> d(12);
  for (std::size_t i = 0; i < d.size(); ++i) d[i] = static_cast<std::uint32_t>(i * 0x01010101u);
  const GemmCases block = gemm_block(g, "hopper-wgmma", 128, x, d, 2, 2);
  CHECK(block.x.a.size() == 2 * 32);
  CHECK(block.x.b.size() == 32 * 2);
  CHECK(block.x.b[1] == x.b[1]);  // row 0 of B, column 1
  CHECK(block.x.b[2] == x.b[3]);  // row 1 of B, column 0
  CHECK(block.d == std::vector<std::uint32_t>{d[0], d[1], d[3], d[4]});
  const GemmCases back = parse_gemm_cases(gemm_cases_text(block));
  CHECK(back.model == "hopper-wgmma");
  CHECK(back.promote_every == 128);
  CHECK(back.gemm.fast_accum);
  CHECK(back.gemm.scale_a == 0.5f);
  CHECK(*back.gemm.input == formats::e4m3);
  CHECK(back.x.a == block.x.a);
  CHECK(back.x.b == block.x.b);
  CHECK(back.x.c == block.x.c);
  CHECK(back.d == block.d);
  CHECK_THROWS_WITH(parse_gemm_cases("model x\n"), "gemm cases: no line 'type'");
  std::string bad = gemm_cases_text(block);
  bad.replace(bad.find("\nd "), 3, "\nd zz ");
  CHECK_THROWS_WITH(parse_gemm_cases(bad), "gemm cases: line 'd' holds a word that is not hex");
  for (const char* count : {"-1", "1e300", "2.5", "4294967296"}) {
    std::string wrong = gemm_cases_text(block);
    wrong.replace(wrong.find("\nm 2\n"), 5, std::string("\nm ") + count + "\n");
    CHECK_THROWS_WITH(parse_gemm_cases(wrong), "gemm cases: line 'm' is not a count");
  }
  CHECK_THROWS_AS(gemm_block(g, "hopper-wgmma", 0, x, d, 5, 2), std::invalid_argument);
}
