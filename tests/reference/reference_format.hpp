// The reference's own picture of a format: every finite magnitude it can
// hold, enumerated from the format's definition (exponent bits, mantissa bits,
// bias, which codes are special) and sorted, so rounding can be done by
// searching for neighbours instead of by manipulating codes as the core does.
//
// Only fmtcheck's enums (Specials, Rounding, ...) are shared with the library;
// the definitions below are typed in from the format specifications and the
// values are decoded here, never through fmtcheck::unpack.
#pragma once

#include <boost/multiprecision/cpp_bin_float.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "fmtcheck/core/format.hpp"

namespace fmtcheck::reference {

// 128 binary digits hold every quantity the reference computes exactly:
// format values have at most 24 significant bits, inputs at most 53 (double),
// midpoints m + 2 and stochastic-rounding thresholds m + n + 2 <= 57. The
// exponent range is far wider than fp64's, so comparisons never round.
using Real = boost::multiprecision::number<
    boost::multiprecision::cpp_bin_float<128, boost::multiprecision::digit_base_2, void, std::int32_t, -20000, 20000>,
    boost::multiprecision::et_off>;

// A format as its specification states it.
struct Definition {
  std::string name;
  int exponent_bits;
  int mantissa_bits;
  int bias;
  Specials specials;
  bool is_signed;
  bool has_subnormals;  // false: exponent field 0 is an ordinary binade (E8M0)
  int pad_bits;         // zero bits below the code in its container (TF32)
};

// The presets fmtcheck promises, from OCP FP8 / OCP MX / IEEE 754 / NVIDIA TF32
// and the fnuz papers (see docs and DESIGN.md's table).
const std::vector<Definition>& preset_definitions();

struct Value {
  Real magnitude;
  std::uint64_t code;  // magnitude code, no sign, no padding
};

class ReferenceFormat {
 public:
  explicit ReferenceFormat(Definition d);

  const Definition& definition() const { return def_; }
  // Finite magnitudes, ascending, followed by one more: the value the code
  // after the largest finite one would have if the exponent range were
  // unbounded (65536 for fp16, 480 for E4M3). Rounding to it is overflow.
  const std::vector<Value>& ladder() const { return ladder_; }
  // (ladder[i] + ladder[i+1]) / 2
  const std::vector<Real>& midpoints() const { return midpoints_; }
  std::size_t overflow_index() const { return ladder_.size() - 1; }
  const Value& max_finite() const { return ladder_[ladder_.size() - 2]; }
  // Smallest magnitude of the lowest normal binade: tininess is "below this".
  const Real& min_normal() const { return min_normal_; }
  // The largest value below min_normal in the same precision with unbounded
  // exponent range (min_normal * (1 - 2^-(m+1))): tininess after rounding
  // asks whether a value between it and min_normal rounds down to it.
  const Real& below_min_normal() const { return below_min_normal_; }
  bool has_zero() const { return def_.has_subnormals; }
  bool has_negative_zero() const { return def_.is_signed && has_zero() && def_.specials != Specials::fnuz; }
  std::uint64_t sign_bit() const;
  // Container bits of a magnitude code with a sign.
  std::uint64_t bits(bool negative, std::uint64_t code) const;

 private:
  Definition def_;
  std::vector<Value> ladder_;
  std::vector<Real> midpoints_;
  Real min_normal_;
  Real below_min_normal_;
};

}  // namespace fmtcheck::reference
