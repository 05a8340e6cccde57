// Runs fmtcheck's conversion and the reference side by side over a set of
// inputs and a set of policies, on all cores, and tallies disagreements.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/policy.hpp"
#include "reference_format.hpp"

namespace fmtcheck::reference {

struct Tally {
  std::uint64_t inputs = 0;
  std::uint64_t evaluations = 0;  // (input, policy) pairs compared
  std::uint64_t mismatches = 0;
  std::vector<std::string> examples;  // the first few, readable
  void merge(const Tally& other);
  std::string summary() const;
};

// A rounding mode; stochastic rounding with its random bit count.
struct RoundingChoice {
  Rounding rounding;
  int sr_bits = 0;
};

// rne rna rtz rup rdn rto, and sr with 1, 3, 8, 13 and 32 random bits.
std::vector<RoundingChoice> every_rounding();

// Each rounding x sat/nosat x keep/ftz/daz/ftz_daz x tininess after/before.
std::vector<Policy> policy_matrix(std::span<const RoundingChoice> roundings);
// Each rounding with the default other axes (nosat, keep, after).
std::vector<Policy> rounding_only(std::span<const RoundingChoice> roundings);

// Compares fmtcheck::convert(x, format, p) with the reference for every input
// and policy. Finite inputs take the NaN conventions in turn (they matter only
// for NaNs created by overflow); NaN and infinite inputs take all three.
// Stochastic rounding draws fresh random bits per comparison from a fixed
// seed, one in eight of them 0 or all ones.
template <typename T>
Tally check_agreement(const ReferenceFormat& reference, const Format& format, std::span<const T> inputs,
                      std::span<const Policy> policies, std::uint64_t seed);

}  // namespace fmtcheck::reference
