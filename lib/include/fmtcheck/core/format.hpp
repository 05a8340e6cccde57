// Formats as data: a floating-point format is a small value describing its
// encoding, never a class hierarchy. Every algorithm in fmtcheck is written
// once against this description.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace fmtcheck {

// How a format spends its top codes on infinities and NaNs.
enum class Specials : std::uint8_t {
  ieee,  // exponent all ones: infinity (mantissa 0) or NaN (mantissa != 0)
  fn,    // only the all-ones magnitude is NaN (OCP E4M3, E8M0); no infinity unless extended
  fnuz,  // no negative zero, the code 1000...0 is the only NaN; no infinity unless extended
  none,  // every code is finite (OCP MX FP6 / FP4)
};

// The encoding alone: trivially copyable and constexpr throughout, so that
// the rounding core takes it by value on the CPU and in GPU kernels alike
// (nvcc --expt-relaxed-constexpr).
struct Encoding {
  int exponent_bits = 0;  // 1..11
  int mantissa_bits = 0;  // 0..52 stored fraction bits
  int bias = 0;
  Specials specials = Specials::ieee;
  bool is_signed = true;        // false only for unsigned scale formats (E8M0)
  bool has_subnormals = true;   // false: exponent field 0 is a normal binade and there is no zero
  int storage_bits = 8;         // container width: 8, 16, 32 or 64
  int pad_bits = 0;             // zero bits below the code in its container (tf32: 13)
  // fn and fnuz only: the magnitude code above the largest finite one is
  // infinity (IEEE P3109's extended domain: 0x7F/0xFF signed, 0xFE unsigned).
  bool extended = false;

  // Width of the code itself (sign + exponent + mantissa).
  [[nodiscard]] constexpr int width() const { return (is_signed ? 1 : 0) + exponent_bits + mantissa_bits; }
  [[nodiscard]] constexpr int precision() const { return mantissa_bits + 1; }
  [[nodiscard]] constexpr std::uint64_t magnitude_mask() const {
    return (std::uint64_t{1} << (exponent_bits + mantissa_bits)) - 1;
  }
  [[nodiscard]] constexpr std::uint64_t sign_bit() const {
    return is_signed ? std::uint64_t{1} << (exponent_bits + mantissa_bits) : 0;
  }
  // Exponent of the lowest binade (min normal = 2^min_exponent).
  [[nodiscard]] constexpr int min_exponent() const { return (has_subnormals ? 1 : 0) - bias; }
  // Largest finite magnitude code (no sign, no padding).
  [[nodiscard]] constexpr std::uint64_t max_finite_code() const {
    switch (specials) {
      case Specials::ieee: return infinity_code() - 1;
      case Specials::fn: return magnitude_mask() - 1 - (extended ? 1 : 0);
      case Specials::fnuz: return magnitude_mask() - (extended ? 1 : 0);
      case Specials::none: return magnitude_mask();
    }
    return 0;
  }
  // Exponent of the largest finite value's binade.
  [[nodiscard]] constexpr int max_exponent() const {
    return static_cast<int>(max_finite_code() >> mantissa_bits) - bias;
  }
  // Magnitude code of infinity (formats with has_inf()): exponent all ones
  // and mantissa zero (ieee), or the code above the largest finite (extended).
  [[nodiscard]] constexpr std::uint64_t infinity_code() const {
    if (specials == Specials::fn) return magnitude_mask() - 1;
    if (specials == Specials::fnuz) return magnitude_mask();
    return magnitude_mask() & ~((std::uint64_t{1} << mantissa_bits) - 1);
  }
  [[nodiscard]] constexpr bool has_inf() const { return specials == Specials::ieee || extended; }
  [[nodiscard]] constexpr bool has_nan() const { return specials != Specials::none; }
  [[nodiscard]] constexpr bool has_zero() const { return has_subnormals; }
  [[nodiscard]] constexpr bool has_negative_zero() const {
    return is_signed && has_zero() && specials != Specials::fnuz;
  }

  // Container bits <-> code: tf32 lives in the top 19 bits of a float32.
  [[nodiscard]] constexpr std::uint64_t to_storage(std::uint64_t code) const { return code << pad_bits; }
  [[nodiscard]] constexpr std::uint64_t from_storage(std::uint64_t bits) const {
    return (bits >> pad_bits) & code_mask();
  }
  [[nodiscard]] constexpr std::uint64_t code_mask() const {
    return width() == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << width()) - 1;
  }
  [[nodiscard]] constexpr std::uint64_t storage_mask() const {
    return storage_bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << storage_bits) - 1;
  }

  friend constexpr bool operator==(const Encoding&, const Encoding&) = default;
};

// A format: its encoding and its canonical name, e.g. "fp16" or "e6m9".
struct Format : Encoding {
  std::string name;

  friend bool operator==(const Format& a, const Format& b) = default;
};

// The encodings that kernels need by value, on the CPU and the GPU alike
// (a Format's name lives on the host; functions, as device code cannot
// take a class-type variable by reference); formats:: below names them.
namespace encodings {
//                                    E  M   bias  specials        signed subn  store pad
constexpr Encoding fp32() { return {8, 23, 127, Specials::ieee, true, true, 32, 0}; }
constexpr Encoding fp16() { return {5, 10, 15, Specials::ieee, true, true, 16, 0}; }
constexpr Encoding bf16() { return {8, 7, 127, Specials::ieee, true, true, 16, 0}; }
}  // namespace encodings

// Whether a and b encode the same values in the same bits, whatever their
// names ("e5m10" and fp16 do).
constexpr bool same_encoding(const Encoding& a, const Encoding& b) { return a == b; }

// "ieee", "fn", "fnuz" or "none".
std::string_view to_string(Specials s);
// The specials as `ranges` shows them: to_string's, plus "+inf" for an
// extended P3109 member ("fnuz+inf").
std::string specials_name(const Format& f);

// Every code of a format of at most 16 bits, in order, as container bits;
// throws std::invalid_argument for a wider format.
std::vector<std::uint64_t> every_code(const Format& f);

// Value class of a code.
enum class ValueClass : std::uint8_t { zero, subnormal, normal, inf, nan };
std::string_view to_string(ValueClass c);
ValueClass classify(const Format& f, std::uint64_t bits);

// Named presets.
namespace formats {
extern const Format fp64, fp32, tf32, fp16, bf16;
extern const Format e4m3, e5m2, e4m3fnuz, e5m2fnuz;
extern const Format e2m3, e3m2, e2m1, e8m0;
}  // namespace formats

// Every preset, in the order `fmtcheck ranges` lists them.
std::span<const Format> preset_formats();

// Exponent bits of the IEEE P3109 binary8 member of this precision; its
// bias is 2^(exponent bits - 1).
constexpr int p3109_exponent_bits(int precision, bool is_signed) { return 8 - precision + (is_signed ? 0 : 1); }
// The IEEE P3109 binary8 family (p3109.cpp): precision 1..7 signed,
// 1..8 unsigned; extended members have infinities. Named
// "binary8p<P><s|u><e|f>". nullopt for a precision outside the family.
std::optional<Format> p3109_format(int precision, bool is_signed, bool extended);
// Every member: signed extended, signed finite, unsigned extended, unsigned
// finite, each by precision.
std::span<const Format> p3109_formats();
// A member by the report's name ("binary8p3se"; "binary8p3" is the signed
// extended one) or gfloat's ("p3109_k8p3se"), lower case; nullopt otherwise.
std::optional<Format> parse_p3109_name(std::string_view lower);

// A preset name or alias ("fp16", "half", "float8_e4m3fn", ...) or a spec
// string "eXmY[ieee|fn|fnuz|ns][_bN]", or a P3109 name. Returns nullopt and fills *error when
// the text names no format.
std::optional<Format> parse_format(std::string_view text, std::string* error = nullptr);
// Same, throwing std::invalid_argument with the reason.
Format format_from_string(std::string_view text);
// A comma-separated list ("fp16,bf16,e4m3"; empty items are skipped;
// "p3109" stands for every member of that family);
// throws std::invalid_argument for a bad name or an empty list.
std::vector<Format> format_list_from_string(std::string_view text);

}  // namespace fmtcheck
