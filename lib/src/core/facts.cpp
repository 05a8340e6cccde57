// Facts of a format, derived from its codes (never typed in by hand, so a
// user format gets the same treatment as a preset).
#include "fmtcheck/core/facts.hpp"

#include <cmath>

#include "fmtcheck/core/decode.hpp"

namespace fmtcheck {
namespace {

std::string range(const Format& f, std::uint64_t lo, std::uint64_t hi) {
  if (lo == hi) return to_hex(f, f.to_storage(lo));
  return to_hex(f, f.to_storage(lo)) + "-" + to_hex(f, f.to_storage(hi));
}

}  // namespace

FormatFacts facts(const Format& f) {
  FormatFacts r;
  const int m = f.mantissa_bits;
  const std::uint64_t max_code = f.max_finite_code();
  r.max_finite = to_double(f, f.to_storage(max_code));
  // Lowest binade: code 1 << m for formats with subnormals, code 0 otherwise.
  r.min_normal = to_double(f, f.to_storage(f.has_subnormals ? std::uint64_t{1} << m : 0));
  if (f.has_subnormals && m > 0) r.min_subnormal = to_double(f, f.to_storage(1));
  r.epsilon = std::ldexp(1.0, -m);
  r.ulp_one = r.epsilon;
  r.unit_roundoff = r.epsilon / 2;
  r.digits10 = static_cast<int>(std::floor(m * std::log10(2.0)));
  r.max_digits10 = static_cast<int>(std::ceil((m + 1) * std::log10(2.0) + 1));

  // Magnitude codes 0..max_code are finite on each side, except that the
  // negative zero code of fnuz formats is their NaN.
  const std::uint64_t positive = max_code + 1;
  r.finite_codes = !f.is_signed ? positive : f.specials == Specials::fnuz ? 2 * positive - 1 : 2 * positive;
  r.finite_values = r.finite_codes - (f.has_negative_zero() ? 1 : 0);

  switch (f.specials) {
    case Specials::ieee: {
      r.pos_inf_bits = f.to_storage(f.infinity_code());
      const std::uint64_t lo = f.infinity_code() + 1;
      const std::uint64_t hi = f.magnitude_mask();
      r.nan_codes = 2 * (hi - lo + 1);
      r.nan_encodings = range(f, lo, hi) + ", " + range(f, f.sign_bit() | lo, f.sign_bit() | hi);
      break;
    }
    case Specials::fn:
      if (f.extended) r.pos_inf_bits = f.to_storage(f.infinity_code());
      r.nan_codes = f.is_signed ? 2 : 1;
      r.nan_encodings = to_hex(f, f.to_storage(f.magnitude_mask()));
      if (f.is_signed) r.nan_encodings += ", " + to_hex(f, f.to_storage(f.sign_bit() | f.magnitude_mask()));
      break;
    case Specials::fnuz:
      if (f.extended) r.pos_inf_bits = f.to_storage(f.infinity_code());
      r.nan_codes = 1;
      r.nan_encodings = to_hex(f, f.to_storage(f.sign_bit()));
      break;
    case Specials::none:
      r.nan_encodings = "none";
      break;
  }
  return r;
}

Record facts_record(const Format& f) {
  const FormatFacts r = facts(f);
  const auto i = [](int v) { return FieldValue(static_cast<std::int64_t>(v)); };
  return {{"format", f.name},
          {"bits", i(f.width())},
          {"storage_bits", i(f.storage_bits)},
          {"exponent_bits", i(f.exponent_bits)},
          {"mantissa_bits", i(f.mantissa_bits)},
          {"bias", i(f.bias)},
          {"specials", specials_name(f)},
          {"signed", f.is_signed},
          {"max_finite", r.max_finite},
          {"min_normal", r.min_normal},
          {"min_subnormal", r.min_subnormal ? FieldValue(*r.min_subnormal) : FieldValue()},
          {"epsilon", r.epsilon},
          {"ulp_one", r.ulp_one},
          {"unit_roundoff", r.unit_roundoff},
          {"digits10", i(r.digits10)},
          {"max_digits10", i(r.max_digits10)},
          {"finite_codes", r.finite_codes},
          {"finite_values", r.finite_values},
          {"inf", r.pos_inf_bits ? FieldValue(to_hex(f, *r.pos_inf_bits)) : FieldValue()},
          {"nan_codes", r.nan_codes},
          {"nan_encodings", r.nan_encodings}};
}

}  // namespace fmtcheck
