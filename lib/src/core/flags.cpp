#include "fmtcheck/core/flags.hpp"

namespace fmtcheck {

std::string_view to_string(Flag f) {
  switch (f) {
    case Flag::inexact: return "inexact";
    case Flag::underflow: return "underflow";
    case Flag::overflow: return "overflow";
    case Flag::invalid: return "invalid";
    case Flag::divide_by_zero: return "divide_by_zero";
    case Flag::saturated: return "saturated";
    case Flag::flushed: return "flushed";
    case Flag::tiny_to_zero: return "tiny_to_zero";
    case Flag::subnormal: return "subnormal";
    case Flag::nan_produced: return "nan_produced";
  }
  return "?";
}

std::string describe(Flags f) {
  if (!f.any()) return "none";
  std::string s;
  for (int i = 0; i < flag_count; ++i) {
    const auto flag = static_cast<Flag>(i);
    if (!f.has(flag)) continue;
    if (!s.empty()) s += "|";
    s += to_string(flag);
  }
  return s;
}

}  // namespace fmtcheck
