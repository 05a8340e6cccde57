// TF32 in every rounding mode (rna is cvt.rna.tf32.f32, rne the usual
// round-to-nearest, rtz what tensor cores do to raw fp32 registers) over ten
// million random float32 inputs and every TF32 boundary, against the
// independent reference.
#include <doctest/doctest.h>

#include <chrono>
#include <string>

#include "agreement.hpp"
#include "fmtcheck/core/format.hpp"
#include "inputs.hpp"
#include "reference_format.hpp"

using namespace fmtcheck;
using namespace fmtcheck::reference;

namespace {

const ReferenceFormat& tf32_reference() {
  static const ReferenceFormat f = [] {
    for (const Definition& d : preset_definitions()) {
      if (d.name == "tf32") return ReferenceFormat(d);
    }
    throw std::logic_error("no tf32 definition");
  }();
  return f;
}

void run(const char* what, const std::vector<float>& inputs, std::uint64_t seed) {
  const auto start = std::chrono::steady_clock::now();
  const auto roundings = every_rounding();
  const auto policies = rounding_only(roundings);
  const Tally tally = check_agreement<float>(tf32_reference(), formats::tf32, inputs, policies, seed);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  MESSAGE("tf32 " << std::string(what) << " x " << policies.size() << " roundings: " << tally.summary() << " (" << seconds << " s)");
  CHECK(tally.mismatches == 0);
}

}  // namespace

TEST_CASE("tf32, every rounding mode: ten million random float32 inputs") {
  run("random", random_inputs<float>(tf32_reference(), 10'000'000, 32), 32);
}

TEST_CASE("tf32, every rounding mode: every value, every tie, their neighbours, every binade edge, specials") {
  std::vector<float> inputs = boundary_inputs<float>(tf32_reference());
  for (float x : special_inputs<float>()) inputs.push_back(x);
  run("boundary", inputs, 33);
}
