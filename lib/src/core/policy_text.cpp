#include "fmtcheck/core/policy_text.hpp"

#include <stdexcept>

namespace fmtcheck {

Policy policy_from_text(const PolicyText& o) {
  Policy p;
  auto need = [](auto parsed, const std::string& option, const std::string& value, const char* allowed) {
    if (!parsed) throw std::invalid_argument("bad " + option + " '" + value + "': expected one of " + allowed);
    return *parsed;
  };
  p.rounding = need(parse_rounding(o.round), "--round", o.round, "rne, rna, rtz, rup, rdn, rto, sr, sr-rne, sr-rna, sr-rno");
  p.overflow = need(parse_overflow(o.overflow), "--overflow", o.overflow, "sat, nosat, satprop");
  p.subnormals = need(parse_subnormals(o.subnormals), "--subnormals", o.subnormals, "keep, ftz, daz, ftz+daz");
  p.tininess = need(parse_tininess(o.tininess), "--tininess", o.tininess, "after, before");
  p.nan = need(parse_nan_convention(o.nan), "--nan", o.nan, "ieee, x86, arm, arm-dn, riscv, cuda, numpy, ml_dtypes, torch, canonical");
  if (is_stochastic(p.rounding)) {
    if (o.sr_bits < 1 || o.sr_bits > 32) {
      throw std::invalid_argument("--round " + o.round + " needs --sr-bits between 1 and 32");
    }
    if (o.sr_bits < 32 && (o.sr_random >> o.sr_bits) != 0) {
      throw std::invalid_argument("--sr-random " + std::to_string(o.sr_random) + " does not fit in " +
                                  std::to_string(o.sr_bits) + " bits");
    }
    p.random_bit_count = o.sr_bits;
    p.random_bits = o.sr_random;
  } else if (o.sr_bits != 0) {
    throw std::invalid_argument("--sr-bits applies only to --round sr, sr-rne, sr-rna and sr-rno");
  }
  return p;
}

}  // namespace fmtcheck
