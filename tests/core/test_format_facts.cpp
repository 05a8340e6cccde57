// Every preset's facts against the reference table in DESIGN.md (typed in
// here as literals: that table, checked against the OCP FP8 / MX specs, IEEE
// 754 and NVIDIA's TF32 description, is the independent source), and the
// format names parse_format accepts and rejects.
#include <doctest/doctest.h>

#include <optional>
#include <stdexcept>
#include <string>

#include "fmtcheck/core/facts.hpp"
#include "fmtcheck/core/format.hpp"

using namespace fmtcheck;

namespace {

struct Published {
  const Format* format;
  double max_finite;
  double min_normal;
  std::optional<double> min_subnormal;
  double epsilon;                      // 2^-M: the next value above 1, minus 1
  std::uint64_t finite_codes;          // sign x (codes below the specials)
  std::uint64_t finite_values;         // +0 and -0 counted once
  std::optional<std::uint64_t> pos_inf_bits;
  std::uint64_t nan_codes;
  const char* nan_encodings;
};

// Counts: fp16 has 31 usable exponent fields x 1024 mantissas = 31744
// magnitudes per sign; E4M3 loses only S.1111.111 (127 per sign); fnuz keeps
// every magnitude but has no -0 (256 - 1 NaN = 255); E8M0 is unsigned with
// 0xFF its NaN.
const Published kTable[] = {
    {&formats::fp16, 65504, 0x1p-14, 0x1p-24, 0x1p-10, 63488, 63487, 0x7C00, 2046, "0x7c01-0x7fff, 0xfc01-0xffff"},
    {&formats::bf16, 0x1.FEp127 /* 0x7F7F ~ 3.39e38 */, 0x1p-126, 0x1p-133, 0x1p-7, 65280, 65279, 0x7F80, 254,
     "0x7f81-0x7fff, 0xff81-0xffff"},
    {&formats::tf32, 0x1.FFCp127 /* 0x7F7FE000 */, 0x1p-126, 0x1p-136, 0x1p-10, 522240, 522239, 0x7F800000, 2046,
     "0x7f802000-0x7fffe000, 0xff802000-0xffffe000"},
    {&formats::e4m3, 448, 0x1p-6, 0x1p-9, 0x1p-3, 254, 253, std::nullopt, 2, "0x7f, 0xff"},
    {&formats::e5m2, 57344, 0x1p-14, 0x1p-16, 0x1p-2, 248, 247, 0x7C, 6, "0x7d-0x7f, 0xfd-0xff"},
    {&formats::e4m3fnuz, 240, 0x1p-7, 0x1p-10, 0x1p-3, 255, 255, std::nullopt, 1, "0x80"},
    {&formats::e5m2fnuz, 57344, 0x1p-15, 0x1p-17, 0x1p-2, 255, 255, std::nullopt, 1, "0x80"},
    {&formats::e2m3, 7.5, 1, 0.125, 0x1p-3, 64, 63, std::nullopt, 0, "none"},
    {&formats::e3m2, 28, 0.25, 0.0625, 0x1p-2, 64, 63, std::nullopt, 0, "none"},
    {&formats::e2m1, 6, 1, 0.5, 0x1p-1, 16, 15, std::nullopt, 0, "none"},
    {&formats::e8m0, 0x1p127, 0x1p-127, std::nullopt, 1, 255, 255, std::nullopt, 1, "0xff"},
};

}  // namespace

TEST_CASE("facts of every preset match the published table") {
  for (const Published& p : kTable) {
    const Format& f = *p.format;
    INFO(f.name);
    const FormatFacts r = facts(f);
    CHECK(r.max_finite == p.max_finite);
    CHECK(r.min_normal == p.min_normal);
    CHECK(r.min_subnormal == p.min_subnormal);
    CHECK(r.epsilon == p.epsilon);
    CHECK(r.ulp_one == p.epsilon);
    CHECK(r.unit_roundoff == p.epsilon / 2);
    CHECK(r.finite_codes == p.finite_codes);
    CHECK(r.finite_values == p.finite_values);
    CHECK(r.pos_inf_bits == p.pos_inf_bits);
    CHECK(r.nan_codes == p.nan_codes);
    CHECK(r.nan_encodings == p.nan_encodings);
  }
}

TEST_CASE("classify agrees with the published special encodings") {
  CHECK(classify(formats::fp16, 0x7C00) == ValueClass::inf);
  CHECK(classify(formats::fp16, 0xFC00) == ValueClass::inf);
  CHECK(classify(formats::fp16, 0x7C01) == ValueClass::nan);
  CHECK(classify(formats::fp16, 0x7BFF) == ValueClass::normal);
  CHECK(classify(formats::fp16, 0x03FF) == ValueClass::subnormal);
  CHECK(classify(formats::fp16, 0x8000) == ValueClass::zero);
  CHECK(classify(formats::tf32, 0x7F800000) == ValueClass::inf);
  CHECK(classify(formats::tf32, 0x7F802000) == ValueClass::nan);
  CHECK(classify(formats::e4m3, 0x7E) == ValueClass::normal);  // 448
  CHECK(classify(formats::e4m3, 0x7F) == ValueClass::nan);
  CHECK(classify(formats::e4m3, 0xFF) == ValueClass::nan);
  CHECK(classify(formats::e4m3, 0x78) == ValueClass::normal);  // 256: E4M3 has no infinity
  CHECK(classify(formats::e5m2, 0x7C) == ValueClass::inf);
  CHECK(classify(formats::e5m2, 0x7D) == ValueClass::nan);
  CHECK(classify(formats::e4m3fnuz, 0x80) == ValueClass::nan);
  CHECK(classify(formats::e4m3fnuz, 0xFF) == ValueClass::normal);  // -240
  CHECK(classify(formats::e5m2fnuz, 0x80) == ValueClass::nan);
  CHECK(classify(formats::e2m1, 0x0F) == ValueClass::normal);  // MX: every code finite
  CHECK(classify(formats::e2m1, 0x08) == ValueClass::zero);
  CHECK(classify(formats::e8m0, 0xFF) == ValueClass::nan);
  CHECK(classify(formats::e8m0, 0x00) == ValueClass::normal);  // 2^-127: E8M0 has no zero
}

TEST_CASE("parse_format: preset names and the aliases of numpy, ml_dtypes, PyTorch and CUDA") {
  const std::pair<const char*, const Format*> aliases[] = {
      {"fp16", &formats::fp16},           {"half", &formats::fp16},
      {"float16", &formats::fp16},        {"FP16", &formats::fp16},
      {"bfloat16", &formats::bf16},       {"BF16", &formats::bf16},
      {"tf32", &formats::tf32},           {"float32", &formats::fp32},
      {"double", &formats::fp64},         {"e4m3", &formats::e4m3},
      {"e4m3fn", &formats::e4m3},         {"float8_e4m3fn", &formats::e4m3},
      {"float8_e5m2", &formats::e5m2},    {"float8_e4m3fnuz", &formats::e4m3fnuz},
      {"e5m2fnuz", &formats::e5m2fnuz},   {"float8_e5m2fnuz", &formats::e5m2fnuz},
      {"float6_e2m3fn", &formats::e2m3},  {"fp6_e3m2", &formats::e3m2},
      {"float4_e2m1fn", &formats::e2m1},  {"fp4", &formats::e2m1},
      {"ue8m0", &formats::e8m0},          {"float8_e8m0fnu", &formats::e8m0},
  };
  for (const auto& [name, expected] : aliases) {
    const auto text = name;  // INFO's lambda cannot capture a structured binding in clang before 16
    INFO(text);
    const auto f = parse_format(text);
    REQUIRE(f.has_value());
    CHECK(*f == *expected);
  }
}

TEST_CASE("parse_format: spec strings") {
  SUBCASE("e6m9: IEEE-style with the customary bias 2^(E-1) - 1") {
    const Format f = format_from_string("e6m9");
    CHECK(f.name == "e6m9");
    CHECK(f.exponent_bits == 6);
    CHECK(f.mantissa_bits == 9);
    CHECK(f.bias == 31);
    CHECK(f.specials == Specials::ieee);
    CHECK(f.storage_bits == 16);
    CHECK(facts(f).max_finite == 0x1.FF8p31);  // (2 - 2^-9) * 2^(62 - 31)
  }
  SUBCASE("a spec spelling out a preset is the preset") {
    CHECK(format_from_string("e5m2") == formats::e5m2);
    CHECK(format_from_string("e5m2ieee") == formats::e5m2);
    CHECK(format_from_string("e4m3fn") == formats::e4m3);
    CHECK(format_from_string("e4m3fn_b7") == formats::e4m3);
    CHECK(format_from_string("e5m2fnuz") == formats::e5m2fnuz);
    CHECK(format_from_string("e3m2ns") == formats::e3m2);
    CHECK(format_from_string("e5m10") == formats::fp16);
    CHECK(format_from_string("e8m7") == formats::bf16);
  }
  SUBCASE("e4m3ieee is not OCP E4M3: it has infinities, max 240, and a name of its own") {
    const Format f = format_from_string("e4m3ieee");
    CHECK(f != formats::e4m3);
    CHECK(f.specials == Specials::ieee);
    CHECK(f.bias == 7);
    CHECK(facts(f).max_finite == 240);
    CHECK(facts(f).pos_inf_bits == std::optional<std::uint64_t>(0x78));
    CHECK(format_from_string(f.name) == f);
  }
  SUBCASE("_bN sets the bias, and the name keeps it") {
    const Format f = format_from_string("e5m2fnuz_b15");
    CHECK(f.specials == Specials::fnuz);
    CHECK(f.bias == 15);
    CHECK(f.name == "e5m2fnuz_b15");
    CHECK(format_from_string(f.name) == f);
    CHECK(facts(f).max_finite == 0x1.Cp16);  // 1.75 * 2^(31 - 15)
    CHECK(format_from_string("e4m3_b-2").bias == -2);
    CHECK(format_from_string("e2m1ns_b0") != formats::e2m1);
    CHECK(format_list_from_string("fp16,,e4m3_b-2,") == std::vector<Format>{formats::fp16, format_from_string("e4m3_b-2")});
  }
  SUBCASE("fnuz's customary bias is one higher") {
    CHECK(format_from_string("e3m4fnuz").bias == 4);
  }
  SUBCASE("every preset's name parses back to it") {
    for (const Format& f : preset_formats()) CHECK(format_from_string(f.name) == f);
  }
}

TEST_CASE("parse_format: errors name the problem") {
  const std::pair<const char*, const char*> bad[] = {
      {"", "unknown format"},
      {"fp17", "unknown format"},
      {"e4", "unknown format"},
      {"em3", "unknown format"},
      {"e4m", "unknown format"},
      {"e4m3xyz", "unknown suffix"},
      {"e0m3", "exponent bits must be 1..11"},
      {"e12m3", "exponent bits must be 1..11"},
      {"e5m53", "mantissa bits must be 0..52"},
      {"e5m0", "needs a mantissa bit"},
      {"e4m3_bx", "bias after _b must be an integer"},
      {"e4m4fnuz_b", "bias after _b must be an integer"},
      {"e4m3_b7x", "bias after _b must be an integer"},
      {"e4m3_b5000", "bias out of range"},
  };
  for (const auto& [name, reason] : bad) {
    const auto text = name;  // INFO's lambda cannot capture a structured binding in clang before 16
    INFO(text);
    std::string error;
    CHECK_FALSE(parse_format(text, &error).has_value());
    CHECK(error.find(reason) != std::string::npos);
    CHECK_THROWS_AS(format_from_string(text), std::invalid_argument);
  }
}

TEST_CASE("parse_format: the IEEE P3109 binary8 family") {
  // The report's names, gfloat's, and binary8pP for the signed extended member.
  for (const Format& f : p3109_formats()) {
    CAPTURE(f.name);
    CHECK(format_from_string(f.name) == f);
  }
  CHECK(p3109_formats().size() == 30);
  CHECK(format_from_string("binary8p3") == format_from_string("binary8p3se"));
  CHECK(format_from_string("p3109_k8p4uf") == format_from_string("binary8p4uf"));
  CHECK(format_from_string("Binary8P5SF").name == "binary8p5sf");
  const Format p3 = format_from_string("binary8p3se");
  CHECK(p3.exponent_bits == 5);
  CHECK(p3.mantissa_bits == 2);
  CHECK(p3.bias == 16);
  CHECK(classify(p3, 0x7F) == ValueClass::inf);
  CHECK(classify(p3, 0xFF) == ValueClass::inf);
  CHECK(classify(p3, 0x80) == ValueClass::nan);
  CHECK(classify(p3, 0x7E) == ValueClass::normal);
  const Format u = format_from_string("binary8p8ue");
  CHECK(u.exponent_bits == 1);
  CHECK(u.bias == 1);
  CHECK(classify(u, 0xFE) == ValueClass::inf);
  CHECK(classify(u, 0xFF) == ValueClass::nan);
  CHECK(classify(u, 0x7F) == ValueClass::subnormal);
  std::string error;
  CHECK_FALSE(parse_format("binary8p8se", &error).has_value());
  CHECK(error.find("P 1..7 signed") != std::string::npos);
  CHECK_FALSE(parse_format("binary8p0ue").has_value());
  CHECK_FALSE(parse_format("binary8p3sx").has_value());
  CHECK_FALSE(parse_format("p3109_k8p3").has_value());  // gfloat's names spell both letters
}
