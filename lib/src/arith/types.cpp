// The runtime Format behind a value type's compile-time Layout.
#include <string>
#include <utility>

#include "fmtcheck/arith/types.hpp"

namespace fmtcheck {

Format format_of(const Layout& l) {
  Format f;
  f.exponent_bits = l.exponent_bits;
  f.mantissa_bits = l.mantissa_bits;
  f.bias = l.bias;
  f.specials = l.specials;
  f.is_signed = l.is_signed;
  f.has_subnormals = l.has_subnormals;
  f.pad_bits = l.pad_bits;
  f.extended = l.extended;
  const int bits = l.width() + l.pad_bits;
  f.storage_bits = bits <= 8 ? 8 : bits <= 16 ? 16 : bits <= 32 ? 32 : 64;
  // A preset (or P3109 member) with the same encoding lends its name (and
  // compares equal to it).
  for (const Format& preset : preset_formats()) {
    if (same_encoding(f, preset)) return preset;
  }
  for (const Format& member : p3109_formats()) {
    if (same_encoding(f, member)) return member;
  }
  // Constructed, then appended to: g++ 12 warns on "e" + std::string&& and
  // on assigning "e" with a false -Wrestrict inside std::string (GCC bug
  // 105329).
  std::string name("e");
  name += std::to_string(l.exponent_bits);
  name += "m";
  name += std::to_string(l.mantissa_bits);
  f.name = std::move(name);
  return f;
}

}  // namespace fmtcheck
