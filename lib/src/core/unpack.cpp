// Exact decoding of container bits into the unpacked form.
#include <bit>
#include <cstring>

#include "fmtcheck/core/unpacked.hpp"

namespace fmtcheck {

Unpacked unpack(const Format& f, std::uint64_t bits) {
  const std::uint64_t code = f.from_storage(bits);
  const std::uint64_t mag = code & f.magnitude_mask();
  const int m = f.mantissa_bits;
  const std::uint64_t field = mag >> m;
  const std::uint64_t mantissa = mag & ((std::uint64_t{1} << m) - 1);
  Unpacked x;
  x.sign = (code & f.sign_bit()) != 0;
  // Left-aligned mantissa: the NaN payload, quiet bit at bit 63.
  const std::uint64_t payload = m == 0 ? 0 : mantissa << (64 - m);

  switch (f.specials) {
    case Specials::ieee:
      if (field == (f.infinity_code() >> m)) {
        x.kind = mantissa == 0 ? Unpacked::Kind::inf : Unpacked::Kind::nan;
        x.significand = payload;
        x.signaling = mantissa != 0 && (mantissa >> (m - 1)) == 0;
        return x;
      }
      break;
    case Specials::fn:
      if (mag == f.magnitude_mask()) {
        x.kind = Unpacked::Kind::nan;
        x.significand = payload;
        return x;
      }
      break;
    case Specials::fnuz:
      if (code == f.sign_bit()) {
        x.kind = Unpacked::Kind::nan;
        return x;
      }
      break;
    case Specials::none: break;
  }
  if (f.extended && mag == f.infinity_code()) {
    x.kind = Unpacked::Kind::inf;
    return x;
  }

  if (!f.has_subnormals) {
    x.kind = Unpacked::Kind::finite;
    x.exponent = static_cast<std::int32_t>(field) - f.bias;
    x.significand = ((std::uint64_t{1} << m) | mantissa) << (63 - m);
    return x;
  }
  if (mag == 0) {
    x.kind = Unpacked::Kind::zero;
    return x;
  }
  x.kind = Unpacked::Kind::finite;
  if (field == 0) {
    const int msb = 63 - std::countl_zero(mantissa);
    x.exponent = f.min_exponent() - m + msb;
    x.significand = mantissa << (63 - msb);
    x.source_subnormal = true;
  } else {
    x.exponent = static_cast<std::int32_t>(field) - f.bias;
    x.significand = ((std::uint64_t{1} << m) | mantissa) << (63 - m);
  }
  return x;
}

Unpacked unpack(float value) { return unpack_float32(std::bit_cast<std::uint32_t>(value)); }
Unpacked unpack(double x) { return unpack(formats::fp64, std::bit_cast<std::uint64_t>(x)); }

}  // namespace fmtcheck
