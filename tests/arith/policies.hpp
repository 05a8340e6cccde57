// The policies the arithmetic proofs run under: every rounding mode with the
// default axes, and every mode again with every other axis switched (sat,
// ftz+daz, tininess before); stochastic rounding with three random draws.
#pragma once

#include <string>
#include <vector>

#include "fmtcheck/core/policy.hpp"

namespace fmtcheck::testing {

inline std::vector<Policy> arithmetic_policies(bool only_default_axes = false) {
  std::vector<Policy> out;
  for (Rounding r : {Rounding::rne, Rounding::rna, Rounding::rtz, Rounding::rup, Rounding::rdn, Rounding::rto,
                     Rounding::sr}) {
    for (bool switched : {false, true}) {
      if (switched && only_default_axes) continue;
      Policy p;
      p.rounding = r;
      if (switched) {
        p.overflow = Overflow::sat;
        p.subnormals = Subnormals::ftz_daz;
        p.tininess = Tininess::before;
      }
      if (r != Rounding::sr) {
        out.push_back(p);
        continue;
      }
      p.random_bit_count = 8;
      for (std::uint32_t draw : {0x00u, 0x5Au, 0xFFu}) {
        p.random_bits = draw;
        out.push_back(p);
      }
    }
  }
  return out;
}

// Each non-default axis once more with rne and rup, alone.
inline std::vector<Policy> single_axis_policies() {
  std::vector<Policy> out;
  for (Rounding r : {Rounding::rne, Rounding::rup}) {
    Policy p;
    p.rounding = r;
    p.overflow = Overflow::sat;
    out.push_back(p);
    p.overflow = Overflow::nosat;
    p.subnormals = Subnormals::ftz;
    out.push_back(p);
    p.subnormals = Subnormals::daz;
    out.push_back(p);
    p.subnormals = Subnormals::keep;
    p.tininess = Tininess::before;
    out.push_back(p);
  }
  return out;
}

inline std::string policy_text(const Policy& p) {
  std::string s = describe(p);
  if (p.rounding == Rounding::sr) s += ",random=" + std::to_string(p.random_bits) + "/" + std::to_string(p.random_bit_count);
  return s;
}

}  // namespace fmtcheck::testing
