// The exact unpacked value every source is turned into before rounding.
#pragma once

#include <cstdint>

#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/host_device.hpp"

namespace fmtcheck {

struct Unpacked {
  enum class Kind : std::uint8_t { zero, finite, inf, nan };
  Kind kind = Kind::zero;
  bool sign = false;
  // finite: |value| = significand * 2^(exponent - 63), with bit 63 of the
  // significand set, so the value lies in [2^exponent, 2^(exponent+1)).
  std::int32_t exponent = 0;
  std::uint64_t significand = 0;
  // finite: the true value has nonzero bits below the significand. 64 bits
  // plus sticky round correctly to any format of at most 62 bits' precision.
  bool sticky = false;
  // NaN: the source mantissa left-aligned (its quiet bit at bit 63).
  bool signaling = false;
  // finite: the value was a subnormal of its source format (for daz).
  bool source_subnormal = false;

  [[nodiscard]] constexpr bool is_nan() const { return kind == Kind::nan; }
  [[nodiscard]] constexpr bool is_inf() const { return kind == Kind::inf; }
  [[nodiscard]] constexpr bool is_zero() const { return kind == Kind::zero; }
  [[nodiscard]] constexpr bool is_finite_nonzero() const { return kind == Kind::finite; }
};

namespace detail {
// Leading zero bits of a nonzero x, on the CPU and the GPU.
FMTCHECK_HD inline int leading_zeros(std::uint64_t x) {
#if defined(__CUDA_ARCH__)
  return __clzll(static_cast<long long>(x));
#else
  return __builtin_clzll(x);
#endif
}
}  // namespace detail

// Exact decoding of a format's container bits: every format, on the CPU and
// in the GPU's kernels (a Format is an Encoding).
FMTCHECK_HD inline Unpacked unpack(const Encoding& f, std::uint64_t bits) {
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
    const int msb = 63 - detail::leading_zeros(mantissa);
    x.exponent = f.min_exponent() - m + msb;
    x.significand = mantissa << (63 - msb);
    x.source_subnormal = true;
  } else {
    x.exponent = static_cast<std::int32_t>(field) - f.bias;
    x.significand = ((std::uint64_t{1} << m) | mantissa) << (63 - m);
  }
  return x;
}
Unpacked unpack(float x);
Unpacked unpack(double x);

// The same decoding as unpack(formats::fp32, bits), written for float32's
// fixed layout: unpack(float), every exhaustive test and batch fallback, and
// the GPU's conversion kernels run through here.
FMTCHECK_HD inline Unpacked unpack_float32(std::uint32_t bits) {
  const std::uint32_t field = (bits >> 23) & 0xFFu;
  const std::uint32_t mantissa = bits & 0x7FFFFFu;
  Unpacked x;
  x.sign = (bits >> 31) != 0;
  if (field == 0xFFu) {
    x.kind = mantissa == 0 ? Unpacked::Kind::inf : Unpacked::Kind::nan;
    x.significand = std::uint64_t{mantissa} << 41;
    x.signaling = mantissa != 0 && (mantissa >> 22) == 0;
    return x;
  }
  if (field != 0) {
    x.kind = Unpacked::Kind::finite;
    x.exponent = static_cast<std::int32_t>(field) - 127;
    x.significand = std::uint64_t{mantissa | 0x800000u} << 40;
    return x;
  }
  if (mantissa == 0) return x;  // zero
  const int msb = 63 - detail::leading_zeros(mantissa);
  x.kind = Unpacked::Kind::finite;
  x.exponent = -126 - 23 + msb;
  x.significand = std::uint64_t{mantissa} << (63 - msb);
  x.source_subnormal = true;
  return x;
}

}  // namespace fmtcheck
