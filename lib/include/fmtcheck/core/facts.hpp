// The numbers people look up about a format.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/record.hpp"

namespace fmtcheck {

struct FormatFacts {
  double max_finite = 0;
  double min_normal = 0;
  std::optional<double> min_subnormal;  // absent when the format has no subnormals
  double epsilon = 0;                   // next value above 1, minus 1
  double ulp_one = 0;                   // spacing of the binade that holds 1 (equals epsilon)
  double unit_roundoff = 0;             // epsilon / 2: the relative error bound of rne
  int digits10 = 0;                     // decimal digits that always survive a round trip
  int max_digits10 = 0;                 // decimal digits needed to identify every value
  std::uint64_t finite_codes = 0;       // codes that decode to a finite value (+0 and -0 both)
  std::uint64_t finite_values = 0;      // distinct finite values (+0 = -0)
  std::optional<std::uint64_t> pos_inf_bits;   // container bits of +inf
  std::uint64_t nan_codes = 0;          // how many codes are NaN
  std::string nan_encodings;            // e.g. "0x7c01-0x7fff, 0xfc01-0xffff"
};

FormatFacts facts(const Format& f);

// The format's description and facts as the fields of `fmtcheck ranges
// --json` (format, bits, storage_bits, ..., nan_encodings).
Record facts_record(const Format& f);

}  // namespace fmtcheck
