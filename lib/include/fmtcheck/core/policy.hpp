// A conversion policy is a set of independent axes; every combination is
// valid and means exactly one thing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fmtcheck {

enum class Rounding : std::uint8_t {
  rne,  // to nearest, ties to even
  rna,  // to nearest, ties away from zero (CUDA cvt.rna)
  rtz,  // toward zero
  rup,  // toward +infinity
  rdn,  // toward -infinity
  rto,  // to odd (truncate, then set the last bit if inexact)
  sr,   // stochastic: round away iff floor(frac * 2^n) + random >= 2^n
  sr_rne,  // stochastic: the same with frac * 2^n rounded to nearest even, not down (gfloat's Stochastic)
  sr_rna,  // stochastic: frac * 2^n rounded to nearest, ties away (gfloat's StochasticFast)
  sr_rno,  // stochastic: frac * 2^n rounded to nearest, ties to odd (gfloat's StochasticOdd)
};

// Whether a mode draws random bits.
constexpr bool is_stochastic(Rounding r) {
  return r == Rounding::sr || r == Rounding::sr_rne || r == Rounding::sr_rna || r == Rounding::sr_rno;
}
// Whether a stochastic mode rounds the fraction's top random_bit_count bits
// to nearest (sr-rne, sr-rna, sr-rno) before adding the draw, not down (sr).
constexpr bool rounds_fraction_to_nearest(Rounding r) { return is_stochastic(r) && r != Rounding::sr; }

// The names of IEEE P3109's saturation modes follow each.
enum class Overflow : std::uint8_t {
  sat,      // overflow and infinite inputs become +-max finite (CUDA SATFINITE; SatFinite)
  nosat,    // IEEE: infinity, or NaN where the format has no infinity (OvfInf)
  satprop,  // finite overflow becomes +-max finite, infinities stay infinite (SatPropagate)
};

enum class Subnormals : std::uint8_t {
  keep,     // gradual underflow
  ftz,      // flush tiny results to zero
  daz,      // treat subnormal inputs as zero
  ftz_daz,  // both
};

enum class Tininess : std::uint8_t { after, before };  // IEEE 754 tininess detection

// Which NaN bits a conversion or an operation produces (nan_rules.cpp has
// every rule and the source of each).
enum class NanConvention : std::uint8_t {
  ieee,       // quiet, keep sign and the payload's high bits (x86 F16C)
  cuda,       // as NVIDIA's host conversions (0x7FFF for fp16/bf16, 0x7F for e4m3)
  canonical,  // positive, quiet bit only (ARM with FPCR.DN, RISC-V; also named arm-dn, riscv)
  x86,        // SSE/AVX/F16C: ieee's, and a created NaN is the negative default NaN
  arm,        // ARM without default-NaN mode: ieee's, signaling operands first, positive default NaN
  numpy,      // numpy's float16 casts: sign and payload kept, not quieted
  ml_dtypes,  // ml_dtypes' casts: quiet, sign kept, payload dropped
  torch,      // PyTorch's CPU casts: fp16 as ieee, bf16 0xFFFF, e5m2 sign | 0x7F
};

struct Policy {
  Rounding rounding = Rounding::rne;
  Overflow overflow = Overflow::nosat;
  Subnormals subnormals = Subnormals::keep;
  Tininess tininess = Tininess::after;
  NanConvention nan = NanConvention::ieee;
  // Stochastic rounding: the caller's random bits (low random_bit_count bits used).
  std::uint32_t random_bits = 0;
  int random_bit_count = 0;  // 1..32 when is_stochastic(rounding)

  [[nodiscard]] constexpr bool flush_inputs() const {
    return subnormals == Subnormals::daz || subnormals == Subnormals::ftz_daz;
  }
  [[nodiscard]] constexpr bool flush_results() const {
    return subnormals == Subnormals::ftz || subnormals == Subnormals::ftz_daz;
  }
  friend bool operator==(const Policy&, const Policy&) = default;
};

std::string_view to_string(Rounding r);
std::string_view to_string(Overflow o);
std::string_view to_string(Subnormals s);
std::string_view to_string(Tininess t);
std::string_view to_string(NanConvention n);

std::optional<Rounding> parse_rounding(std::string_view s);
std::optional<Overflow> parse_overflow(std::string_view s);
std::optional<Subnormals> parse_subnormals(std::string_view s);
std::optional<Tininess> parse_tininess(std::string_view s);
std::optional<NanConvention> parse_nan_convention(std::string_view s);

// "rne,nosat,keep,after,ieee" — the policy in one line.
std::string describe(const Policy& p);

}  // namespace fmtcheck
