// Every preset, float32 inputs, every policy: fmtcheck's rounding core
// against the independent reference.
#include <doctest/doctest.h>

#include <chrono>

#include "agreement.hpp"
#include "fmtcheck/core/format.hpp"
#include "inputs.hpp"
#include "reference_format.hpp"

using namespace fmtcheck;
using namespace fmtcheck::reference;

TEST_CASE("the reference's definitions are fmtcheck's presets, field by field") {
  for (const Definition& d : preset_definitions()) {
    INFO(d.name);
    const Format f = format_from_string(d.name);
    CHECK(f.exponent_bits == d.exponent_bits);
    CHECK(f.mantissa_bits == d.mantissa_bits);
    CHECK(f.bias == d.bias);
    CHECK(f.specials == d.specials);
    CHECK(f.is_signed == d.is_signed);
    CHECK(f.has_subnormals == d.has_subnormals);
    CHECK(f.pad_bits == d.pad_bits);
  }
}

// The reference itself, checked against the published numbers (DESIGN.md's
// table, OCP FP8 and MX specifications) typed in as literals.
TEST_CASE("the reference's ladders hold the published extremes") {
  struct Expected {
    const char* name;
    double max_finite;
    double smallest_positive;  // min subnormal, or min normal without subnormals
    double min_normal;
    double first_beyond;       // the value rounding to which overflows
    std::size_t finite_magnitudes;
  };
  const Expected table[] = {
      {"fp16", 65504, 0x1p-24, 0x1p-14, 65536, 31744},
      {"bf16", 0x1.FEp127, 0x1p-133, 0x1p-126, 0x1p128, 32640},
      {"tf32", 0x1.FFCp127, 0x1p-136, 0x1p-126, 0x1p128, 261120},
      {"e4m3", 448, 0x1p-9, 0x1p-6, 480, 127},
      {"e5m2", 57344, 0x1p-16, 0x1p-14, 65536, 124},
      {"e4m3fnuz", 240, 0x1p-10, 0x1p-7, 256, 128},
      {"e5m2fnuz", 57344, 0x1p-17, 0x1p-15, 65536, 128},
      {"e2m3", 7.5, 0.125, 1, 8, 32},
      {"e3m2", 28, 0.0625, 0.25, 32, 32},
      {"e2m1", 6, 0.5, 1, 8, 8},
      {"e8m0", 0x1p127, 0x1p-127, 0x1p-127, 0x1p128, 255},
  };
  for (const Expected& e : table) {
    INFO(e.name);
    const auto& defs = preset_definitions();
    const auto d = std::find_if(defs.begin(), defs.end(), [&](const Definition& x) { return x.name == e.name; });
    REQUIRE(d != defs.end());
    const ReferenceFormat f(*d);
    const auto& ladder = f.ladder();
    CHECK(ladder.size() - 1 == e.finite_magnitudes);
    CHECK(f.max_finite().magnitude == Real(e.max_finite));
    CHECK(ladder[ladder[0].magnitude == 0 ? 1 : 0].magnitude == Real(e.smallest_positive));
    CHECK(f.min_normal() == Real(e.min_normal));
    CHECK(ladder.back().magnitude == Real(e.first_beyond));
  }
}

TEST_CASE("fmtcheck agrees with the reference: every preset, float32 inputs, every policy") {
  // tf32's 3 million boundary inputs are all checked, in every rounding mode,
  // by fmtcheck-reference-tf32; here an even sample of them meets the full
  // policy matrix.
  constexpr std::size_t kRandomPerFormat = 20000;
  constexpr std::size_t kMaxBoundary = 400000;
  const auto roundings = every_rounding();
  const auto policies = policy_matrix(roundings);
  std::uint64_t seed = 1;
  for (const Definition& d : preset_definitions()) {
    const auto start = std::chrono::steady_clock::now();
    const ReferenceFormat reference(d);
    const Format format = format_from_string(d.name);
    std::vector<float> inputs = boundary_inputs<float>(reference);
    inputs = every_nth(inputs, (inputs.size() + kMaxBoundary - 1) / kMaxBoundary);
    for (float x : special_inputs<float>()) inputs.push_back(x);
    for (float x : random_inputs<float>(reference, kRandomPerFormat, seed)) inputs.push_back(x);
    const Tally tally = check_agreement<float>(reference, format, inputs, policies, seed++);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    MESSAGE(d.name << " x " << policies.size() << " policies: " << tally.summary() << " (" << seconds << " s)");
    CHECK(tally.mismatches == 0);
  }
}
