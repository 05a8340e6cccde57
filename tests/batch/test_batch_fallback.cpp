// convert_batch for pairs the SIMD kernel does not serve: the core converts
// every value, and the flag counts of a long batch are tallied by flag
// combination (convert_fast.hpp). Both batch lengths, the short one
// counted value by value and the long one through the table, must give the
// core's bits and the sum of its per-value flags.
#include <doctest/doctest.h>

#include <bit>
#include <cstdint>
#include <vector>

#include "fmtcheck/batch/convert_batch.hpp"
#include "fmtcheck/core/convert.hpp"

using namespace fmtcheck;

namespace {

// A stride through every float32 bit pattern: both signs, zeros, subnormals,
// every binade, infinities and NaNs; the second value a signaling NaN, so
// that even a widening conversion raises a flag.
std::vector<float> stride_inputs(std::size_t n) {
  std::vector<float> v(n);
  const std::uint64_t step = (std::uint64_t{1} << 32) / n + 1;
  for (std::size_t i = 0; i < n; ++i) v[i] = std::bit_cast<float>(static_cast<std::uint32_t>(i * step));
  v[1] = std::bit_cast<float>(0x7F800001u);
  return v;
}

// Consecutive bit patterns as a sweep gives them, in two parts. First,
// runs aligned as a sweep's (64-value runs starting at a multiple of 64),
// 512 patterns from each of these mantissas, in two binades, both signs:
// from 0 (the run holding the exact value), and just below the half-ulp
// pattern of fp16 and tf32 (0x1000), of bf16 (0x8000) and of E8M0
// (0x400000), so that runs holding the tie, runs on either side and runs
// crossing into the next code all occur. A long batch takes a run at once
// where its last 6 mantissa bits decide nothing (Rounder::shares_low_bits).
// Then 200 from 100 below the start of each of these exponent fields, both
// signs, unaligned: runs share a binade whose result the core shares
// (beyond the range, far below the subnormals); runs across a boundary, or
// across two spans, must not.
std::vector<float> run_inputs() {
  std::vector<float> v;
  for (const std::uint32_t sign : {0u, 0x80000000u}) {
    for (const std::uint32_t field : {127u, 142u}) {
      for (const std::uint32_t mantissa : {0u, 0xF00u, 0x7F00u, 0x3FFF00u}) {
        const std::uint32_t start = sign | field << 23 | mantissa;
        for (std::uint32_t i = 0; i < 512; ++i) v.push_back(std::bit_cast<float>(start + i));
      }
    }
  }
  for (const std::uint32_t sign : {0u, 0x80000000u}) {
    for (const std::uint32_t field : {1, 2, 60, 100, 110, 112, 113, 120, 127, 135, 142, 143, 144, 150, 200, 254, 255}) {
      const std::uint32_t start = sign | field << 23;
      for (std::uint32_t i = 0; i < 200; ++i) v.push_back(std::bit_cast<float>(start - 100 + i));
    }
  }
  return v;
}

template <typename Out>
void check_pair(const Format& f, const Policy& p) {
  CAPTURE(f.name);
  CAPTURE(describe(p));
  for (const std::vector<float>& in : {stride_inputs(100), stride_inputs(5000), run_inputs()}) {
    const std::size_t n = in.size();
    CAPTURE(n);
    std::vector<Out> out(n);
    const FlagCounts counts = convert_batch(in, f, p, std::span<Out>(out));
    FlagCounts core;
    std::size_t differ = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const Conversion c = convert(in[i], f, p);
      core.add(c.flags);
      differ += out[i] != static_cast<Out>(c.bits);
    }
    CHECK(differ == 0);
    CHECK(counts.values == n);
    CHECK(counts.count == core.count);
    std::uint64_t raised = 0;  // the inputs do raise flags to count (fp64: invalid, from the signaling NaN)
    for (const std::uint64_t c : core.count) raised += c;
    CHECK(raised > 0);
  }
}

}  // namespace

TEST_CASE("convert_batch through the core: bits and flag counts == the core value by value, short and long batches") {
  check_pair<std::uint8_t>(formats::e4m3, Policy{.rounding = Rounding::rtz, .overflow = Overflow::sat});
  check_pair<std::uint8_t>(formats::e8m0, Policy{.rounding = Rounding::rna});
  // Stochastic rounding with the policy's own bits, the largest 8-bit draw.
  check_pair<std::uint8_t>(formats::e5m2, Policy{.rounding = Rounding::sr, .random_bits = 0xFF, .random_bit_count = 8});
  check_pair<std::uint16_t>(formats::bf16, Policy{.nan = NanConvention::canonical});
  check_pair<std::uint16_t>(formats::fp16, Policy{.subnormals = Subnormals::ftz_daz, .tininess = Tininess::before});
  check_pair<std::uint32_t>(formats::tf32, Policy{.rounding = Rounding::rup, .overflow = Overflow::sat});
  check_pair<std::uint32_t>(formats::fp32, Policy{.subnormals = Subnormals::ftz});
  check_pair<std::uint64_t>(formats::fp64, Policy{.subnormals = Subnormals::daz});
}

TEST_CASE("convert_batch serves every IEEE P3109 member: the table in every deterministic mode, the core under sr") {
  // Every member in rne, rna, rtz, rup and rdn under each saturation mode
  // takes the table of the core's results (batch/convert_table.hpp), whose
  // own proof on every float32 input is test_batch_table_exhaustive.cpp;
  // stochastic rounding falls back to the core. The core itself is proven
  // against gfloat (tests/python/test_p3109.py).
  for (const Format& f : p3109_formats()) {
    for (const Rounding r : {Rounding::rne, Rounding::rna, Rounding::rtz, Rounding::rup, Rounding::rdn}) {
      for (const Overflow o : {Overflow::nosat, Overflow::sat, Overflow::satprop}) {
        check_pair<std::uint8_t>(f, Policy{.rounding = r, .overflow = o});
      }
    }
  }
  check_pair<std::uint8_t>(*p3109_format(3, true, true), Policy{.rounding = Rounding::sr, .random_bits = 5, .random_bit_count = 3});
  check_pair<std::uint8_t>(*p3109_format(3, true, true),
                           Policy{.rounding = Rounding::sr_rne, .random_bits = 3, .random_bit_count = 3});
  check_pair<std::uint16_t>(formats::bf16, Policy{.rounding = Rounding::sr_rne, .random_bits = 1, .random_bit_count = 1});
}
