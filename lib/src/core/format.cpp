// Format presets and the facts derived from the description alone.
#include "fmtcheck/core/format.hpp"

#include <stdexcept>

namespace fmtcheck {

std::string_view to_string(ValueClass c) {
  switch (c) {
    case ValueClass::zero: return "zero";
    case ValueClass::subnormal: return "subnormal";
    case ValueClass::normal: return "normal";
    case ValueClass::inf: return "inf";
    case ValueClass::nan: return "nan";
  }
  return "?";
}

std::string_view to_string(Specials s) {
  switch (s) {
    case Specials::ieee: return "ieee";
    case Specials::fn: return "fn";
    case Specials::fnuz: return "fnuz";
    case Specials::none: return "none";
  }
  return "?";
}

std::string specials_name(const Format& f) {
  std::string name(to_string(f.specials));
  if (f.extended && f.specials != Specials::ieee) name += "+inf";
  return name;
}

std::vector<std::uint64_t> every_code(const Format& f) {
  if (f.width() > 16) {
    throw std::invalid_argument("format " + f.name + " has " + std::to_string(f.width()) +
                                "-bit codes; `values` lists formats of at most 16 bits");
  }
  std::vector<std::uint64_t> codes(std::size_t{1} << f.width());
  for (std::uint64_t code = 0; code < codes.size(); ++code) codes[code] = f.to_storage(code);
  return codes;
}

ValueClass classify(const Format& f, std::uint64_t bits) {
  const std::uint64_t code = f.from_storage(bits);
  const std::uint64_t mag = code & f.magnitude_mask();
  switch (f.specials) {
    case Specials::ieee:
      if ((mag & f.infinity_code()) == f.infinity_code()) return mag == f.infinity_code() ? ValueClass::inf : ValueClass::nan;
      break;
    case Specials::fn:
      if (mag == f.magnitude_mask()) return ValueClass::nan;
      break;
    case Specials::fnuz:
      if (code == f.sign_bit()) return ValueClass::nan;
      break;
    case Specials::none: break;
  }
  if (f.extended && mag == f.infinity_code()) return ValueClass::inf;
  if (!f.has_subnormals) return ValueClass::normal;
  if (mag == 0) return ValueClass::zero;
  if ((mag >> f.mantissa_bits) == 0) return ValueClass::subnormal;
  return ValueClass::normal;
}

namespace formats {
//                 E   M  bias  specials         signed subn  store pad
const Format fp64{{11, 52, 1023, Specials::ieee, true, true, 64, 0}, "fp64"};
const Format fp32{encodings::fp32(), "fp32"};
const Format tf32{{8, 10, 127, Specials::ieee, true, true, 32, 13}, "tf32"};
const Format fp16{encodings::fp16(), "fp16"};
const Format bf16{encodings::bf16(), "bf16"};
const Format e4m3{{4, 3, 7, Specials::fn, true, true, 8, 0}, "e4m3"};
const Format e5m2{{5, 2, 15, Specials::ieee, true, true, 8, 0}, "e5m2"};
const Format e4m3fnuz{{4, 3, 8, Specials::fnuz, true, true, 8, 0}, "e4m3fnuz"};
const Format e5m2fnuz{{5, 2, 16, Specials::fnuz, true, true, 8, 0}, "e5m2fnuz"};
const Format e2m3{{2, 3, 1, Specials::none, true, true, 8, 0}, "e2m3"};
const Format e3m2{{3, 2, 3, Specials::none, true, true, 8, 0}, "e3m2"};
const Format e2m1{{2, 1, 1, Specials::none, true, true, 8, 0}, "e2m1"};
const Format e8m0{{8, 0, 127, Specials::fn, false, false, 8, 0}, "e8m0"};
}  // namespace formats

std::span<const Format> preset_formats() {
  static const Format all[] = {formats::fp64, formats::fp32, formats::tf32, formats::fp16,
                               formats::bf16, formats::e4m3, formats::e5m2, formats::e4m3fnuz,
                               formats::e5m2fnuz, formats::e2m3, formats::e3m2, formats::e2m1,
                               formats::e8m0};
  return all;
}

}  // namespace fmtcheck
