// Policy and flag names are part of the CLI and the CSV columns: they must
// stay stable and round-trip.
#include <doctest/doctest.h>

#include "fmtcheck/core/flags.hpp"
#include "fmtcheck/core/policy.hpp"

using namespace fmtcheck;

TEST_CASE("every rounding mode name parses back to itself") {
  for (const char* name : {"rne", "rna", "rtz", "rup", "rdn", "rto", "sr"}) {
    const auto r = parse_rounding(name);
    REQUIRE(r.has_value());
    CHECK(to_string(*r) == name);
  }
  CHECK_FALSE(parse_rounding("nearest").has_value());
  CHECK_FALSE(parse_rounding("RNE").has_value());
}

TEST_CASE("the other axes parse their documented names only") {
  CHECK(parse_overflow("sat") == Overflow::sat);
  CHECK(parse_overflow("nosat") == Overflow::nosat);
  CHECK_FALSE(parse_overflow("saturate").has_value());
  CHECK(parse_subnormals("ftz+daz") == Subnormals::ftz_daz);
  CHECK(parse_subnormals("daz") == Subnormals::daz);
  CHECK_FALSE(parse_subnormals("flush").has_value());
  CHECK(parse_tininess("before") == Tininess::before);
  CHECK(parse_nan_convention("cuda") == NanConvention::cuda);
  CHECK_FALSE(parse_nan_convention("x86").has_value());
}

TEST_CASE("the default policy is IEEE round-to-nearest-even without saturation") {
  CHECK(describe(Policy{}) == "rne,nosat,keep,after,ieee");
}

TEST_CASE("flags describe themselves in declaration order") {
  CHECK(describe(Flags{}) == "none");
  CHECK(describe(Flags(Flag::tiny_to_zero) | Flag::inexact | Flag::underflow) == "inexact|underflow|tiny_to_zero");
  FlagCounts counts;
  counts.add(Flags(Flag::inexact) | Flag::overflow);
  counts.add(Flag::inexact);
  counts.add({});
  CHECK(counts.values == 3);
  CHECK(counts[Flag::inexact] == 2);
  CHECK(counts[Flag::overflow] == 1);
  CHECK(counts[Flag::underflow] == 0);
}
