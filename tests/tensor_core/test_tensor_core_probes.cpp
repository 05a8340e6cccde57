// The classic tensor-core probes (Fasi et al. 2021; MMA-Sim, arXiv
// 2511.10909), with the expected bits worked out by hand from the model's
// definition and the published parameters: block of L exact products plus C,
// each term truncated toward zero at 2^(e_max - F) (e_max: the largest sum of
// operand exponents, or C's exponent), exact sum, one rounding.
#include <bit>
#include <doctest/doctest.h>
#include <initializer_list>
#include <stdexcept>
#include <utility>
#include <vector>

#include "fmtcheck/core/convert.hpp"
#include "fmtcheck/tensor_core/tensor_core.hpp"

using namespace fmtcheck;

namespace {

DotModel preset(const char* model, const Format& input) {
  const TensorCoreModel* m = find_tensor_core_model(model);
  REQUIRE(m != nullptr);
  const std::optional<DotModel> d = m->for_input(input);
  REQUIRE(d.has_value());
  return *d;
}

// Operands given as exact values of `input` (every value below is exact in it).
std::vector<std::uint64_t> operands(const Format& input, std::initializer_list<double> values) {
  std::vector<std::uint64_t> bits;
  for (const double v : values) {
    const Conversion c = convert(v, input);
    REQUIRE_FALSE(c.flags.has(Flag::inexact));
    bits.push_back(c.bits);
  }
  return bits;
}

std::uint32_t f32(float x) { return std::bit_cast<std::uint32_t>(x); }

// sum a[k]*b[k] + c to fp32 under a preset.
std::uint64_t dot32(const char* model, const Format& input, std::initializer_list<double> a,
                    std::initializer_list<double> b, float c) {
  return dot_product_add(preset(model, input), input, operands(input, a), operands(input, b), f32(c), formats::fp32).bits;
}

constexpr double p2(int e) { return e >= 0 ? double(1ull << e) : 1.0 / double(1ull << -e); }

}  // namespace

TEST_CASE("extra alignment bits: F = 23 on Volta, 24 on Ampere, 25 on Hopper") {
  // 1 + 2*2^-24 = 1 + 2^-23 (0x3f800001) survives only if 2^-24 is kept
  // below e_max = 0, i.e. F >= 24; 1 + 4*2^-25 needs F >= 25.
  const auto two_24 = [](const char* m) { return dot32(m, formats::fp16, {p2(-12), p2(-12)}, {p2(-12), p2(-12)}, 1.0f); };
  const auto four_25 = [](const char* m) {
    return dot32(m, formats::fp16, {p2(-13), p2(-13), p2(-13), p2(-13)}, {p2(-12), p2(-12), p2(-12), p2(-12)}, 1.0f);
  };
  CHECK(two_24("volta") == 0x3f800000u);
  CHECK(two_24("ampere") == 0x3f800001u);
  CHECK(four_25("ampere") == 0x3f800000u);
  CHECK(two_24("hopper") == 0x3f800001u);
  CHECK(four_25("hopper") == 0x3f800001u);
  // The exact model keeps everything and rounds once: 1 + 2^-23 as well.
  CHECK(four_25("exact") == 0x3f800001u);
}

TEST_CASE("alignment truncates toward zero, not toward minus infinity") {
  // 1 - 2^-30: the negative term lies wholly below 2^(0 - F) and vanishes,
  // giving 1 (0x3f800000); rounding it down in two's complement would give
  // 1 - 2^-F and then 0x3f7fffff after truncation to fp32.
  for (const char* m : {"volta", "ampere", "hopper"}) {
    CAPTURE(m);
    CHECK(dot32(m, formats::fp16, {-p2(-15)}, {p2(-15)}, 1.0f) == 0x3f800000u);
  }
  // The fp32 result itself is truncated toward zero: 1 - 2^-25 from the
  // exact model (nearest) is 1, from Hopper (toward zero) 1 - 2^-24.
  CHECK(dot32("exact", formats::fp16, {-p2(-13)}, {p2(-12)}, 1.0f) == 0x3f800000u);
  CHECK(dot32("hopper", formats::fp16, {-p2(-13)}, {p2(-12)}, 1.0f) == 0x3f7fffffu);
}

TEST_CASE("late normalisation: the block is summed before any rounding") {
  // 1 + 1 + 2^-23 + 2^-23 = 2 + 2^-22 (0x40000001) in one Volta block; an
  // fp32 chain that rounds after each addition would lose both 2^-23 (2).
  CHECK(dot32("volta", formats::fp16, {1, 1, p2(-12), p2(-12)}, {1, 1, p2(-11), p2(-11)}, 0.0f) == 0x40000001u);
  CHECK(dot32("ideal-fp32", formats::fp16, {1, 1, p2(-12), p2(-12)}, {1, 1, p2(-11), p2(-11)}, 0.0f) == 0x40000000u);
}

TEST_CASE("carry bits: four near-4 products plus C overflow three binades without loss") {
  // a = b = 2 - 2^-10: each product is 4 - 2^-8 + 2^-20; C = 4 - 2^-8 + 2^-20.
  // The exact sum 20 - 2^-6 - 2^-8 + 2^-18 + 2^-20 truncated to fp32 (ulp 2^-19).
  const double m = 2 - p2(-10);
  const float c = static_cast<float>(4 - p2(-8) + p2(-20));
  CHECK(dot32("volta", formats::fp16, {m, m, m, m}, {m, m, m, m}, c) == 0x419fd802u);
}

TEST_CASE("not monotonic: a larger C can give a smaller result") {
  // C = 2 - 2^-22 has exponent 0, so the four 2^-23 products are kept:
  // 2 + 2^-22. C = 2 has exponent 1, so they are cut at 2^-22 and vanish: 2.
  const std::initializer_list<double> a{p2(-12), p2(-12), p2(-12), p2(-12)};
  const std::initializer_list<double> b{p2(-11), p2(-11), p2(-11), p2(-11)};
  const std::uint64_t smaller_c = dot32("volta", formats::fp16, a, b, static_cast<float>(2 - p2(-22)));
  const std::uint64_t larger_c = dot32("volta", formats::fp16, a, b, 2.0f);
  CHECK(smaller_c == 0x40000001u);
  CHECK(larger_c == 0x40000000u);
}

TEST_CASE("block size: a tiny product survives only outside the block of 1 - 1") {
  // MMA-Sim's block probe: 1*1 + (-1)*1 + 2^-28 at position j. In the same
  // block as the ones (j < L) the tiny term is cut at 2^-F and the result is
  // +0; in the next block it meets C = 0 alone and survives exactly.
  struct Case {
    const char* model;
    const Format* input;
    int block;
  };
  for (const Case& c : {Case{"volta", &formats::fp16, 4}, Case{"ampere", &formats::fp16, 8},
                        Case{"ampere", &formats::tf32, 4}, Case{"hopper", &formats::bf16, 16},
                        Case{"hopper", &formats::tf32, 8}, Case{"hopper-wgmma", &formats::e5m2, 32},
                        Case{"blackwell", &formats::fp16, 16}, Case{"blackwell", &formats::tf32, 8},
                        Case{"blackwell-tcgen05", &formats::e5m2, 32}, Case{"blackwell-rtx", &formats::bf16, 16}}) {
    CAPTURE(c.model);
    CAPTURE(c.input->name);
    const DotModel model = preset(c.model, *c.input);
    REQUIRE(model.block_size == c.block);
    for (int j = 2; j < 2 * c.block; ++j) {
      std::vector<double> a(2 * c.block, 0.0), b(2 * c.block, 0.0);
      a[0] = 1, b[0] = 1, a[1] = -1, b[1] = 1, a[j] = p2(-14), b[j] = p2(-14);
      std::vector<std::uint64_t> ab, bb;
      for (std::size_t k = 0; k < a.size(); ++k) {
        ab.push_back(convert(a[k], *c.input).bits);
        bb.push_back(convert(b[k], *c.input).bits);
      }
      CAPTURE(j);
      const std::uint64_t d = dot_product_add(model, *c.input, ab, bb, 0, formats::fp32).bits;
      CHECK(d == (j < c.block ? 0x00000000u : 0x31800000u));  // +0 or 2^-28
    }
  }
}

TEST_CASE("zero exponent: zero products take no part in e_max") {
  // 0 * 2^15 would have exponent -14 + 15 = 1 if zeros were aligned by their
  // exponent fields, which would cut 2^-23 below 1; this model (like the
  // published data, whose 523 zero E4M3 operands cannot tell either way)
  // leaves zeros out, so 1 + 2^-23 survives on Volta.
  CHECK(dot32("volta", formats::fp16, {0.0, p2(-12)}, {p2(15), p2(-11)}, 1.0f) == 0x3f800001u);
}

TEST_CASE("Hopper FP8: 13 alignment bits and an fp32 result with 13 fraction bits") {
  const Format& e4m3 = formats::e4m3;
  // 1 + 1 + 2^-13 (2^-6 * 2^-7, a subnormal operand): kept at F = 13 below
  // e_max = 0, but the normalised sum 2 + 2^-13 keeps only 13 fraction bits: 2.
  CHECK(dot32("hopper-wgmma", e4m3, {1, 1, p2(-6)}, {1, 1, p2(-7)}, 0.0f) == 0x40000000u);
  // 1 + 2^-13 fits in 13 fraction bits (0x3f800400); 2^-14 below 1 is cut.
  CHECK(dot32("hopper-wgmma", e4m3, {1, p2(-6)}, {1, p2(-7)}, 0.0f) == 0x3f800400u);
  CHECK(dot32("hopper-wgmma", e4m3, {1, p2(-7)}, {1, p2(-7)}, 0.0f) == 0x3f800000u);
  // Ada's FP8 blocks are 16 long (Khattak & Mikaitis): the same two results.
  CHECK(dot32("ada", e4m3, {1, 1, p2(-6)}, {1, 1, p2(-7)}, 0.0f) == 0x40000000u);
}

TEST_CASE("Blackwell: F = 25 for every type, FP8 included, and all 23 fraction bits") {
  // MMA-Sim (arch_accum_fractional_bits, TCGen05MMASim) and Khattak &
  // Mikaitis (B200TC: neab = 2 for every input) give F = 25 with no 13-bit
  // FP8 output on B200 and RTX Blackwell.
  for (const char* m : {"blackwell", "blackwell-tcgen05", "blackwell-rtx"}) {
    CAPTURE(m);
    // 1 + 4 * 2^-25 = 1 + 2^-23 survives at F = 25 ...
    CHECK(dot32(m, formats::fp16, {p2(-13), p2(-13), p2(-13), p2(-13)}, {p2(-12), p2(-12), p2(-12), p2(-12)}, 1.0f) ==
          0x3f800001u);
    // ... but 8 * 2^-26 (= 2^-23 exactly) is cut below 2^-25: F is not 26.
    CHECK(dot32(m, formats::fp16, {p2(-13), p2(-13), p2(-13), p2(-13), p2(-13), p2(-13), p2(-13), p2(-13)},
                {p2(-13), p2(-13), p2(-13), p2(-13), p2(-13), p2(-13), p2(-13), p2(-13)}, 1.0f) == 0x3f800000u);
    // FP8: 1 + 2^-14 (2^-7 * 2^-7) is kept whole, 0x3f800200, where Hopper's
    // wgmma cuts it (0x3f800000, above); 2 + 2^-13 keeps its last bit too.
    CHECK(dot32(m, formats::e4m3, {1, p2(-7)}, {1, p2(-7)}, 0.0f) == 0x3f800200u);
    CHECK(dot32(m, formats::e4m3, {1, 1, p2(-6)}, {1, 1, p2(-7)}, 0.0f) == 0x40000200u);
    // fp32 output toward zero: 1 + 1.5 * 2^-24 gives 1 (nearest would give 1 + 2^-23).
    CHECK(dot32(m, formats::bf16, {p2(-12), p2(-13)}, {p2(-12), p2(-12)}, 1.0f) == 0x3f800000u);
  }
}

TEST_CASE("FP8 mma.sync on Hopper and Blackwell: two fp16 blocks by k mod 4, then C added to nearest") {
  for (const char* m : {"hopper", "blackwell"}) {
    CAPTURE(m);
    const DotModel model = preset(m, formats::e5m2);
    REQUIRE(model.structure == DotStructure::fp16_groups);
    // 1*1 + (-1)*1 + 2^-14*2^-14 at position j: with k mod 4 in {0,1} the
    // tiny product shares the first block with 1 - 1 and is cut below
    // 2^-25 (+0); in the second block it meets C = +0 alone and survives.
    for (int j = 2; j < 32; ++j) {
      std::vector<double> a(32, 0.0), b(32, 0.0);
      a[0] = 1, b[0] = 1, a[1] = -1, b[1] = 1, a[j] = p2(-14), b[j] = p2(-14);
      std::vector<std::uint64_t> ab, bb;
      for (std::size_t k = 0; k < 32; ++k) {
        ab.push_back(convert(a[k], formats::e5m2).bits);
        bb.push_back(convert(b[k], formats::e5m2).bits);
      }
      CAPTURE(j);
      const std::uint64_t d = dot_product_add(model, formats::e5m2, ab, bb, 0, formats::fp32).bits;
      CHECK(d == (j % 4 < 2 ? 0x00000000u : 0x31800000u));  // +0 or 2^-28
    }
    // The first block's result is the second's C: 2^-15*2^-15 = 2^-30 alone
    // at k = 0, then 1 - 1 at k = 2, 3 with C = 2^-30, which is cut there:
    // +0. The other order would give 2^-30 (0x30800000).
    CHECK(dot32(m, formats::e5m2, {p2(-15), 0, 1, -1}, {p2(-15), 0, 1, 1}, 0.0f) == 0x00000000u);
    // C is added last and rounded to nearest: 1 + 1.5 * 2^-24 gives
    // 1 + 2^-23 (0x3f800001); fused with the products and truncated, as
    // tcgen05 does, it gives 1.
    CHECK(dot32(m, formats::e5m2, {1.5 * p2(-12)}, {p2(-12)}, 1.0f) == 0x3f800001u);
  }
  CHECK(dot32("blackwell-tcgen05", formats::e5m2, {1.5 * p2(-12)}, {p2(-12)}, 1.0f) == 0x3f800000u);
}

TEST_CASE("fp16 output rounds the truncated sum to nearest even, with no sticky bit") {
  // 1 + 2^-11 + 2^-30: the 2^-30 is cut at alignment, leaving a tie between
  // 1 and 1 + 2^-10 that goes to even: 1 (0x3c00). Correct rounding of the
  // exact sum would give 1 + 2^-10 (0x3c01).
  const auto a = operands(formats::fp16, {p2(-11), p2(-15)});
  const auto b = operands(formats::fp16, {1, p2(-15)});
  CHECK(dot_product_add(preset("ampere", formats::fp16), formats::fp16, a, b, 0x3c00, formats::fp16).bits == 0x3c00u);
  CHECK(dot_product_add(preset("exact", formats::fp16), formats::fp16, a, b, 0x3c00, formats::fp16).bits == 0x3c01u);
}

TEST_CASE("tf32 operands: the low 13 bits of the fp32 register are ignored") {
  // 0x3f801000 is 1 + 2^-11 in fp32, halfway between two tf32 values; cvt.rna
  // would give 1 + 2^-10, the tensor core reads 1.
  const std::vector<std::uint64_t> a{0x3f801000}, b{0x3f800000};
  CHECK(dot_product_add(preset("ampere", formats::tf32), formats::tf32, a, b, 0, formats::fp32).bits == 0x3f800000u);
}

TEST_CASE("special values give the canonical NaN or the infinity") {
  const Format& h = formats::fp16;
  const DotModel m = preset("hopper", h);
  const std::uint64_t inf = 0x7c00, ninf = 0xfc00, nan = 0x7e00, one = 0x3c00, zero = 0;
  const auto d = [&](std::vector<std::uint64_t> a, std::vector<std::uint64_t> b, std::uint64_t c) {
    return dot_product_add(m, h, a, b, c, formats::fp32).bits;
  };
  CHECK(d({nan, one}, {one, one}, 0) == 0x7fffffffu);
  CHECK(d({inf, one}, {zero, one}, 0) == 0x7fffffffu);         // inf * 0
  CHECK(d({inf, ninf}, {one, one}, 0) == 0x7fffffffu);         // inf - inf
  CHECK(d({inf, one}, {one, one}, 0xff800000) == 0x7fffffffu);  // inf + (-inf from C)
  CHECK(d({inf, one}, {one, one}, f32(1e30f)) == 0x7f800000u);
  CHECK(d({one, one}, {ninf, one}, 0) == 0xff800000u);
  // A sum of zeros is -0 only when every term is -0, as in IEEE addition.
  CHECK(d({0x8000, 0x8000}, {one, one}, 0x80000000) == 0x80000000u);
  CHECK(d({0x8000, zero}, {one, one}, 0x80000000) == 0x00000000u);
  // Exact cancellation gives +0.
  CHECK(d({one, 0xbc00}, {one, one}, 0) == 0x00000000u);
}

namespace {

// K operands of `input`, zero except the given (position, value) pairs.
std::vector<std::uint64_t> sparse(const Format& input, std::size_t k, std::initializer_list<std::pair<std::size_t, double>> at) {
  std::vector<std::uint64_t> bits(k, 0);
  for (const auto& [i, v] : at) bits[i] = operands(input, {v}).front();
  return bits;
}

std::uint64_t e8m0(int exponent) { return static_cast<std::uint64_t>(127 + exponent); }

}  // namespace

TEST_CASE("block-scaled MMA (MMA-Sim): scaled products align with C, F = 25 for mxf8f6f4") {
  const Format& e4m3 = formats::e4m3;
  const auto ones = sparse(e4m3, 32, {{0, 1}, {1, 1}, {2, 1}, {3, 1}});
  const auto d = [&](int scale_exponent) {
    const std::vector<std::uint64_t> sa{e8m0(scale_exponent)}, sb{e8m0(0)};
    return block_scaled_dot_product_add(blackwell_mxf8f6f4, e4m3, ones, ones, formats::e8m0, sa, sb, f32(1.0f)).bits;
  };
  // 1 + 4 * 2^-25 = 1 + 2^-23 survives at F = 25; 4 * 2^-26 is cut.
  CHECK(d(-25) == 0x3f800001u);
  CHECK(d(-26) == 0x3f800000u);
  // 1.5 * 1.5 * 2^3 * 2^-1 = 9.
  const auto x = sparse(e4m3, 32, {{5, 1.5}});
  const std::vector<std::uint64_t> sa{e8m0(3)}, sb{e8m0(-1)};
  CHECK(block_scaled_dot_product_add(blackwell_mxf8f6f4, e4m3, x, x, formats::e8m0, sa, sb, 0).bits == 0x41100000u);
}

TEST_CASE("block-scaled MMA (MMA-Sim): mxf4 sums groups of 16 exactly, aligns them by the scales, F = 35") {
  const Format& e2m1 = formats::e2m1;
  // Groups: k 0-15 gives +1, k 16-31 gives -1 (scales 2^0), k 32-47 gives
  // 1 * 2^s (second scale block). 1 - 1 + 2^-35 keeps 2^-35 (0x2e000000) at
  // F = 35; 2^-36 is cut to +0; at F = 25 (mxf8f6f4's) 2^-35 is cut too.
  const auto a = sparse(e2m1, 64, {{0, 1}, {16, -1}, {32, 1}});
  const auto b = sparse(e2m1, 64, {{0, 1}, {16, 1}, {32, 1}});
  const auto d = [&](const BlockScaledModel& m, int s) {
    const std::vector<std::uint64_t> sa{e8m0(0), e8m0(s)}, sb{e8m0(0), e8m0(0)};
    return block_scaled_dot_product_add(m, e2m1, a, b, formats::e8m0, sa, sb, 0).bits;
  };
  CHECK(d(blackwell_mxf4, -35) == 0x2e000000u);
  CHECK(d(blackwell_mxf4, -36) == 0x00000000u);
  CHECK(d(blackwell_mxf8f6f4, -35) == 0x00000000u);
  // A group's term is aligned by its scales' exponents (0 here), not by its
  // value's binade (36 = 1.125 * 2^5): 36 - 36 + C keeps C = 2^-33 (2^-33 >=
  // 2^(0-35)), which an alignment at 2^(5-35) would cut.
  const auto six = sparse(e2m1, 64, {{0, 6}, {16, -6}});
  const auto six_b = sparse(e2m1, 64, {{0, 6}, {16, 6}});
  const std::vector<std::uint64_t> one{e8m0(0), e8m0(0)};
  CHECK(block_scaled_dot_product_add(blackwell_mxf4, e2m1, six, six_b, formats::e8m0, one, one, f32(0x1p-33f)).bits ==
        0x2f000000u);
}

TEST_CASE("block-scaled MMA: UE4M3 scales multiply their significands, sign ignored; NaN scales") {
  const Format& e2m1 = formats::e2m1;
  const auto x = sparse(e2m1, 64, {{0, 1}});
  // nvf4: block16, four scales per operand; 1.5 (0x3c) and -1.5 (0xbc) both give 1 * 1 * 2.25.
  const std::vector<std::uint64_t> sa{0xbc, 0x38, 0x38, 0x38}, sb{0x3c, 0x38, 0x38, 0x38};
  CHECK(block_scaled_dot_product_add(blackwell_mxf4, e2m1, x, x, formats::e4m3, sa, sb, 0).bits == 0x40100000u);
  const std::vector<std::uint64_t> nan{0xff, e8m0(0)}, one{e8m0(0), e8m0(0)};
  CHECK(block_scaled_dot_product_add(blackwell_mxf4, e2m1, x, x, formats::e8m0, nan, one, 0).bits == 0x7fffffffu);
  CHECK_THROWS_AS(block_scaled_dot_product_add(blackwell_mxf4, formats::e5m2, x, x, formats::e8m0, one, one, 0),
                  std::invalid_argument);
}
