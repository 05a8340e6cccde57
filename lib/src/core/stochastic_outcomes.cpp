// The exact distribution of a stochastic rounding, by bisection over the
// draws (see the header for why each outcome is one run of draws).
#include "fmtcheck/core/stochastic_outcomes.hpp"

#include <stdexcept>

namespace fmtcheck {
namespace {

void add(std::vector<StochasticOutcome>& out, const Conversion& c, std::uint64_t draws) {
  if (!out.empty() && out.back().result == c) {
    out.back().draws += draws;
  } else {
    out.push_back({c, draws});
  }
}

// Draws lo..hi (inclusive), whose results at the two ends are a and b: one
// run when they agree, else split in two.
void walk(const Rounder& round, const Unpacked& x, std::uint64_t lo, std::uint64_t hi, const Conversion& a,
          const Conversion& b, std::vector<StochasticOutcome>& out) {
  if (a == b) {
    add(out, a, hi - lo + 1);
    return;
  }
  if (hi - lo == 1) {
    add(out, a, 1);
    add(out, b, 1);
    return;
  }
  const std::uint64_t mid = lo + (hi - lo) / 2;
  walk(round, x, lo, mid, a, round(x, static_cast<std::uint32_t>(mid)), out);
  walk(round, x, mid + 1, hi, round(x, static_cast<std::uint32_t>(mid + 1)), b, out);
}

}  // namespace

std::vector<StochasticOutcome> stochastic_outcomes(const Unpacked& x, const Format& to, const Policy& p) {
  if (!is_stochastic(p.rounding)) {
    throw std::invalid_argument("stochastic_outcomes: the policy's rounding is not stochastic");
  }
  if (p.random_bit_count < 1 || p.random_bit_count > 32) {
    throw std::invalid_argument("stochastic_outcomes: stochastic rounding takes 1 to 32 random bits");
  }
  const Rounder round(to, p);
  const std::uint64_t last = (std::uint64_t{1} << p.random_bit_count) - 1;
  std::vector<StochasticOutcome> out;
  walk(round, x, 0, last, round(x, 0), round(x, static_cast<std::uint32_t>(last)), out);
  return out;
}

std::optional<StochasticMean> stochastic_mean(const std::vector<StochasticOutcome>& outcomes, const Format& to,
                                              const ExactValue& input) {
  if (input.kind() != ExactValue::Kind::finite) return std::nullopt;
  std::vector<ExactValue> values;
  std::vector<std::uint64_t> draws;
  for (const StochasticOutcome& o : outcomes) {
    values.push_back(ExactValue::from_bits(to, o.result.bits));
    if (values.back().kind() != ExactValue::Kind::finite) return std::nullopt;
    draws.push_back(o.draws);
  }
  const ExactValue mean = ExactValue::weighted_mean(values, draws);
  return StochasticMean{mean.to_double(), ExactValue::difference(mean, input).to_double()};
}

}  // namespace fmtcheck
