// Double inputs (fp64 source) for every preset and every policy: doubles can
// sit a hair off a tie or a binade edge where no float can, and their
// subnormals exercise daz on a different source.
#include <doctest/doctest.h>

#include <chrono>

#include "agreement.hpp"
#include "fmtcheck/core/format.hpp"
#include "inputs.hpp"
#include "reference_format.hpp"

using namespace fmtcheck;
using namespace fmtcheck::reference;

TEST_CASE("fmtcheck agrees with the reference: every preset, double inputs, every policy") {
  constexpr std::size_t kRandomPerFormat = 10000;
  constexpr std::size_t kMaxBoundary = 20000;
  const auto roundings = every_rounding();
  const auto policies = policy_matrix(roundings);
  std::uint64_t seed = 64;
  for (const Definition& d : preset_definitions()) {
    const auto start = std::chrono::steady_clock::now();
    const ReferenceFormat reference(d);
    const Format format = format_from_string(d.name);
    std::vector<double> inputs = boundary_inputs<double>(reference);
    inputs = every_nth(inputs, (inputs.size() + kMaxBoundary - 1) / kMaxBoundary);
    for (double x : special_inputs<double>()) inputs.push_back(x);
    for (double x : random_inputs<double>(reference, kRandomPerFormat, seed)) inputs.push_back(x);
    const Tally tally = check_agreement<double>(reference, format, inputs, policies, seed++);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    MESSAGE(d.name << " x " << policies.size() << " policies: " << tally.summary() << " (" << seconds << " s)");
    CHECK(tally.mismatches == 0);
  }
}
