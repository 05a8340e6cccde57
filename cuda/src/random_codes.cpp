#include "random_codes.hpp"

#include <algorithm>

namespace fmtcheck::cuda::detail {

std::uint64_t random_code(const Format& f, Draws& d) {
  const std::uint64_t sign = d.below(2) ? f.sign_bit() : 0;
  const std::uint64_t pick = d.below(16);
  const std::uint64_t fraction = d.next() & ((std::uint64_t{1} << f.mantissa_bits) - 1);
  if (pick == 0) return sign;
  if (pick == 1) return sign | (fraction == 0 ? 1 : fraction);
  const int lo = std::max(1, f.bias - 8), hi = std::min(f.bias + 4, static_cast<int>(f.max_finite_code() >> f.mantissa_bits));
  const auto field = static_cast<std::uint64_t>(lo + static_cast<int>(d.below(static_cast<std::uint64_t>(hi - lo + 1))));
  const std::uint64_t code = sign | (field << f.mantissa_bits) | fraction;
  return (code & f.magnitude_mask()) > f.max_finite_code() ? sign | f.max_finite_code() : code;
}

}  // namespace fmtcheck::cuda::detail
