// Policy and flag names are part of the CLI and the CSV columns: they must
// stay stable and round-trip.
#include <doctest/doctest.h>

#include "fmtcheck/core/flags.hpp"
#include "fmtcheck/core/policy.hpp"
#include "fmtcheck/core/policy_text.hpp"

#include <stdexcept>
#include <string>

using namespace fmtcheck;

TEST_CASE("every rounding mode name parses back to itself") {
  for (const char* name : {"rne", "rna", "rtz", "rup", "rdn", "rto", "sr", "sr-rne", "sr-rna", "sr-rno"}) {
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
  CHECK(parse_nan_convention("x86") == NanConvention::x86);
  CHECK(parse_nan_convention("arm-dn") == NanConvention::canonical);
  CHECK(parse_nan_convention("torch") == NanConvention::torch);
  CHECK(to_string(NanConvention::torch) == "torch");
  CHECK_FALSE(parse_nan_convention("sse").has_value());
  CHECK(parse_overflow("satprop") == Overflow::satprop);
  CHECK(parse_overflow("satpropagate") == Overflow::satprop);
  CHECK(to_string(Overflow::satprop) == "satprop");
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

TEST_CASE("policy_from_text: the words of every axis, and what it rejects") {
  PolicyText t;
  t.round = "rtz";
  t.overflow = "sat";
  t.subnormals = "ftz+daz";
  t.tininess = "before";
  t.nan = "cuda";
  const Policy p = policy_from_text(t);
  CHECK(describe(p) == "rtz,sat,ftz+daz,before,cuda");
  const auto rejected = [](PolicyText bad, const std::string& words) {
    try {
      policy_from_text(bad);
    } catch (const std::invalid_argument& e) {
      CHECK(std::string(e.what()) == words);
      return;
    }
    FAIL("accepted " << words);
  };
  rejected(PolicyText{.round = "nearest"}, "bad --round 'nearest': expected one of rne, rna, rtz, rup, rdn, rto, sr, sr-rne, sr-rna, sr-rno");
  rejected(PolicyText{.overflow = "clip"}, "bad --overflow 'clip': expected one of sat, nosat, satprop");
  rejected(PolicyText{.nan = "mips"},
           "bad --nan 'mips': expected one of ieee, x86, arm, arm-dn, riscv, cuda, numpy, ml_dtypes, torch, canonical");
  rejected(PolicyText{.round = "sr"}, "--round sr needs --sr-bits between 1 and 32");
  rejected(PolicyText{.round = "sr-rne"}, "--round sr-rne needs --sr-bits between 1 and 32");
  rejected(PolicyText{.round = "sr", .sr_random = 4, .sr_bits = 2}, "--sr-random 4 does not fit in 2 bits");
  rejected(PolicyText{.sr_bits = 3}, "--sr-bits applies only to --round sr, sr-rne, sr-rna and sr-rno");
  const Policy sr = policy_from_text(PolicyText{.round = "sr", .sr_random = 3, .sr_bits = 2});
  CHECK(sr.random_bit_count == 2);
  CHECK(sr.random_bits == 3);
}
