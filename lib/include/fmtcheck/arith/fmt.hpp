// Opt-in {fmt} support (not included by fmtcheck.hpp): "{}" and every
// floating-point spec print the value as a double would ("{:.3f}", "{:g}");
// "{:x}", "{:X}" and "{:b}" print the container bits, zero-padded to the
// container width ("0x3f80", "0b0011111110000000").
#pragma once

#include <fmt/format.h>

#include "fmtcheck/arith/types.hpp"

template <fmtcheck::Layout L, fmtcheck::Policy P>
struct fmt::formatter<fmtcheck::basic_float<L, P>> : fmt::formatter<double> {
  using T = fmtcheck::basic_float<L, P>;
  char bits_style = 0;  // 'x', 'X' or 'b': print the bits

  constexpr auto parse(fmt::format_parse_context& ctx) {
    auto it = ctx.begin();
    if (it != ctx.end() && (*it == 'x' || *it == 'X' || *it == 'b') && it + 1 != ctx.end() && *(it + 1) == '}') {
      bits_style = *it;
      return it + 1;
    }
    return fmt::formatter<double>::parse(ctx);
  }

  template <class Context>
  auto format(T x, Context& ctx) const {
    constexpr int bits = static_cast<int>(sizeof(typename T::storage_type)) * 8;
    switch (bits_style) {
      case 'x': return fmt::format_to(ctx.out(), "{:#0{}x}", x.bits(), bits / 4 + 2);
      case 'X': return fmt::format_to(ctx.out(), "0x{:0{}X}", x.bits(), bits / 4);
      case 'b': return fmt::format_to(ctx.out(), "{:#0{}b}", x.bits(), bits + 2);
      default: return fmt::formatter<double>::format(static_cast<double>(x), ctx);
    }
  }
};
