// Comparison and reporting: differences, ulps, the table, the CSV and the
// exit code.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include "fmtcheck/cuda/compare.hpp"

using namespace fmtcheck;
using namespace fmtcheck::cuda;

TEST_CASE("value difference and ulp distance") {
  // fp16: 0x3C01 is 1 + 2^-10.
  CHECK(value_difference(formats::fp16, 0x3C01, 0x3C00) == "0.0009765625");
  CHECK(ulp_distance(formats::fp16, 0x3C01, 0x3C00) == 1);
  // Across zero: +min subnormal and -min subnormal are two steps apart; +0 and -0 none.
  CHECK(ulp_distance(formats::fp16, 0x0001, 0x8001) == 2);
  CHECK(ulp_distance(formats::fp16, 0x0000, 0x8000) == 0);
  CHECK(ulp_distance(formats::fp16, 0x7E00, 0x3C00) == -1);
  CHECK(value_difference(formats::fp16, 0x7E00, 0x7FFF) == "nan");
  CHECK(value_difference(formats::fp32, 0x7F800000, 0x3F800000) == "inf");
  // e4m3: 0x7E is 448, 0x7D is 416.
  CHECK(value_difference(formats::e4m3, 0x7D, 0x7E) == "-32");
}

TEST_CASE("a comparison keeps its differences and builds inputs only for them") {
  Comparison c{"fp16 rne", formats::fp16};
  c.max_kept = 2;
  int built = 0;
  auto inputs = [&] {
    ++built;
    return std::string("x=0x3f800001");
  };
  c.check(0x3C00, 0x3C00, inputs);
  c.check(0x3C01, 0x3C00, inputs);
  c.check(0x3C02, 0x3C00, inputs);
  c.check(0x3C03, 0x3C00, inputs);
  CHECK(c.compared == 4);
  CHECK(c.differing == 3);
  CHECK(c.kept.size() == 2);
  CHECK(built == 2);
  CHECK(summary_line(c) == "fp16 rne: 4 compared, 3 differ");
  const std::string table = difference_table(c, 1);
  CHECK(table.find("x=0x3f800001  0x3c01    0x3c00    1.0009765625") != std::string::npos);
  CHECK(table.find("... 2 more") != std::string::npos);
  CHECK(c.unexplained());
  CHECK(exit_code({c}) == 1);
  c.known_gap = "no public model";
  CHECK_FALSE(c.unexplained());
  CHECK(exit_code({c}) == 0);
  CHECK(summary_line(c) == "fp16 rne: 4 compared, 3 differ (known gap: no public model)");
}

TEST_CASE("long operand lists wrap: every line within 100 columns, every operand kept") {
  // An FP8 mma.sync difference: 32 products' operands on each side.
  Comparison c{"mma m16n8k32 e4m3->fp32", formats::fp32};
  std::string inputs = "tile 0 row 3 col 2: a =";
  for (int j = 0; j < 32; ++j) inputs += fmt::format(" {:02x}", 0x38 + j);
  inputs += "; b =";
  for (int j = 0; j < 32; ++j) inputs += fmt::format(" {:02x}", 0xb8 - j);
  inputs += "; c = 3f800000";
  c.check(0x3F800001, 0x3F800000, [&] { return inputs; });
  const std::string table = difference_table(c, 10);
  std::size_t start = 0, lines = 0;
  std::string words;
  while (start < table.size()) {
    const std::size_t end = table.find('\n', start);
    const std::string line = table.substr(start, end - start);
    CHECK(line.size() <= 100);
    ++lines;
    if (lines > 2) words += line + " ";
    start = end + 1;
  }
  CHECK(table.rfind("  1. hardware 0x3f800001 = 1.0000001192092896, emulator 0x3f800000 = 1\n"
                    "     difference (ulps) 1.1920928955078125e-07 (1)\n     tile 0 row 3 col 2: a = 38 39",
                    0) == 0);
  // The inputs, read back across the wrapped lines, are the operands in order.
  std::string squeezed;
  for (char ch : words) {
    if (ch != ' ' || (!squeezed.empty() && squeezed.back() != ' ')) squeezed += ch;
  }
  std::string expected;
  for (char ch : inputs) {
    if (ch != ';') expected += ch;
  }
  CHECK(squeezed == expected + " ");
  CHECK(lines >= 4);
}

TEST_CASE("the CSV has a header and one row per kept difference") {
  Comparison a{"fp16 rtz", formats::fp16};
  a.check(0x3C01, 0x3C00, [] { return std::string("x=0x3f802000"); });
  Comparison b{"e4m3 rne", formats::e4m3};
  b.check(0x01, 0x01, [] { return std::string("never"); });
  CHECK(exit_code({b}) == 0);
  CHECK(differences_csv({a, b}) ==
        "comparison,inputs,hardware_bits,emulator_bits,hardware_value,emulator_value,difference,ulps\n"
        "\"fp16 rtz\",\"x=0x3f802000\",0x3c01,0x3c00,1.0009765625,1,0.0009765625,1\n");
}
