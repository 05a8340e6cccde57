// Every result stochastic rounding can give one value, with how many of the
// 2^k draws give it: the exact distribution behind --round sr and its
// variants, without sampling.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "fmtcheck/core/exact_value.hpp"
#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/policy.hpp"
#include "fmtcheck/core/round_to_format.hpp"
#include "fmtcheck/core/unpacked.hpp"

namespace fmtcheck {

struct StochasticOutcome {
  Conversion result;   // bits and flags
  std::uint64_t draws;  // how many of the 2^random_bit_count draws give it
};

// The outcomes of rounding x under p (a stochastic mode with 1..32 random
// bits; p.random_bits is ignored), in the order of the draws that give
// them, their draws summing to 2^random_bit_count. Each is one run of
// consecutive draws: a larger draw only ever rounds away from zero sooner,
// for the result and for the tininess test alike (round_to_format.cpp), so
// the runs are found by bisection in O(outcomes x random_bit_count)
// roundings. Throws std::invalid_argument for a deterministic mode.
std::vector<StochasticOutcome> stochastic_outcomes(const Unpacked& x, const Format& to, const Policy& p);

// The mean result over all the draws and its difference from the input,
// computed exactly and then rounded to the nearest double; nullopt where
// the input or an outcome is not finite (an overflow to infinity or NaN).
struct StochasticMean {
  double mean;
  double bias;  // mean - input
};
std::optional<StochasticMean> stochastic_mean(const std::vector<StochasticOutcome>& outcomes, const Format& to,
                                              const ExactValue& input);

}  // namespace fmtcheck
