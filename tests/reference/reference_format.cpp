// Enumerates each format's finite magnitudes from its definition.
#include "reference_format.hpp"

#include <algorithm>
#include <stdexcept>

namespace fmtcheck::reference {

const std::vector<Definition>& preset_definitions() {
  //                                  name        E   M  bias  specials         signed subnormals pad
  static const std::vector<Definition> all = {
      {"fp16", 5, 10, 15, Specials::ieee, true, true, 0},
      {"bf16", 8, 7, 127, Specials::ieee, true, true, 0},
      {"tf32", 8, 10, 127, Specials::ieee, true, true, 13},
      {"e4m3", 4, 3, 7, Specials::fn, true, true, 0},
      {"e5m2", 5, 2, 15, Specials::ieee, true, true, 0},
      {"e4m3fnuz", 4, 3, 8, Specials::fnuz, true, true, 0},
      {"e5m2fnuz", 5, 2, 16, Specials::fnuz, true, true, 0},
      {"e2m3", 2, 3, 1, Specials::none, true, true, 0},
      {"e3m2", 3, 2, 3, Specials::none, true, true, 0},
      {"e2m1", 2, 1, 1, Specials::none, true, true, 0},
      {"e8m0", 8, 0, 127, Specials::fn, false, false, 0},
  };
  return all;
}

namespace {

// (2^m + mantissa) * 2^(field - bias - m), or mantissa * 2^(1 - bias - m) in
// the subnormal binade. The field may exceed its width: that is how the
// first value beyond the largest finite one is written.
Real decode(const Definition& d, std::uint64_t code) {
  const int m = d.mantissa_bits;
  const auto field = static_cast<int>(code >> m);
  const std::uint64_t mantissa = code & ((std::uint64_t{1} << m) - 1);
  if (d.has_subnormals && field == 0) return ldexp(Real(mantissa), 1 - d.bias - m);
  return ldexp(Real((std::uint64_t{1} << m) + mantissa), field - d.bias - m);
}

bool is_special(const Definition& d, std::uint64_t code) {
  const int m = d.mantissa_bits;
  const std::uint64_t all_ones = (std::uint64_t{1} << (d.exponent_bits + m)) - 1;
  switch (d.specials) {
    case Specials::ieee: return (code >> m) == (all_ones >> m);  // exponent all ones: inf or NaN
    case Specials::fn: return code == all_ones;                  // S.1111.111 only
    case Specials::fnuz: return false;                           // only -0's code, not a magnitude
    case Specials::none: return false;
  }
  return false;
}

}  // namespace

ReferenceFormat::ReferenceFormat(Definition d) : def_(std::move(d)) {
  const std::uint64_t codes = std::uint64_t{1} << (def_.exponent_bits + def_.mantissa_bits);
  for (std::uint64_t code = 0; code < codes; ++code) {
    if (!is_special(def_, code)) ladder_.push_back({decode(def_, code), code});
  }
  std::sort(ladder_.begin(), ladder_.end(), [](const Value& a, const Value& b) { return a.magnitude < b.magnitude; });
  for (std::size_t i = 1; i < ladder_.size(); ++i) {
    if (ladder_[i].magnitude == ladder_[i - 1].magnitude) throw std::logic_error(def_.name + ": two codes, one value");
  }
  const std::uint64_t beyond = ladder_.back().code + 1;
  ladder_.push_back({decode(def_, beyond), beyond});
  for (std::size_t i = 0; i + 1 < ladder_.size(); ++i) {
    midpoints_.push_back(ldexp(ladder_[i].magnitude + ladder_[i + 1].magnitude, -1));
  }
  min_normal_ = ldexp(Real(1), (def_.has_subnormals ? 1 : 0) - def_.bias);
  below_min_normal_ = min_normal_ - ldexp(min_normal_, -(def_.mantissa_bits + 1));
}

std::uint64_t ReferenceFormat::sign_bit() const {
  return def_.is_signed ? std::uint64_t{1} << (def_.exponent_bits + def_.mantissa_bits) : 0;
}

std::uint64_t ReferenceFormat::bits(bool negative, std::uint64_t code) const {
  return ((negative ? sign_bit() : 0) | code) << def_.pad_bits;
}

}  // namespace fmtcheck::reference
