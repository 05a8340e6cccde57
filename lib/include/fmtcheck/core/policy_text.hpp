// A policy given as words, as the CLI's options (--round rne ...) and the
// Python keywords (round="rne" ...) spell it: one place checks the words and
// says what is wrong, so both front ends reject bad input in the same terms.
#pragma once

#include <cstdint>
#include <string>

#include "fmtcheck/core/policy.hpp"

namespace fmtcheck {

struct PolicyText {
  std::string round = "rne";
  std::string overflow = "nosat";
  std::string subnormals = "keep";
  std::string tininess = "after";
  std::string nan = "ieee";
  std::uint32_t sr_random = 0;  // one value's random draw under sr
  int sr_bits = 0;              // how many random bits stochastic rounding uses
};

// Validates and builds the policy; throws std::invalid_argument naming the
// axis by its CLI option ("bad --round 'x': expected one of rne, ...").
Policy policy_from_text(const PolicyText& text);

}  // namespace fmtcheck
