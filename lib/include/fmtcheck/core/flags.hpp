// Flags are results: every conversion returns what happened, nothing is kept
// in global state.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace fmtcheck {

enum class Flag : std::uint8_t {
  // IEEE 754 exceptions
  inexact,
  underflow,
  overflow,
  invalid,
  divide_by_zero,
  // ML events
  saturated,     // result is +-max finite because the rounded input overflowed (or was infinite)
  flushed,       // a subnormal input (daz) or tiny result (ftz) was replaced by zero
  tiny_to_zero,  // a nonzero finite input gave a zero result
  subnormal,     // the result is a nonzero subnormal
  nan_produced,  // the result is NaN and the input was not
};
inline constexpr int flag_count = 10;

std::string_view to_string(Flag f);

class Flags {
 public:
  constexpr Flags() = default;
  constexpr explicit Flags(std::uint16_t bits) : bits_(bits) {}
  constexpr Flags(Flag f) : bits_(static_cast<std::uint16_t>(1u << static_cast<unsigned>(f))) {}  // NOLINT: implicit by design
  [[nodiscard]] constexpr bool has(Flag f) const { return (bits_ >> static_cast<unsigned>(f)) & 1u; }
  [[nodiscard]] constexpr bool any() const { return bits_ != 0; }
  [[nodiscard]] constexpr std::uint16_t bits() const { return bits_; }
  constexpr Flags& operator|=(Flags o) { bits_ |= o.bits_; return *this; }
  friend constexpr Flags operator|(Flags a, Flags b) { return Flags(static_cast<std::uint16_t>(a.bits_ | b.bits_)); }
  friend constexpr bool operator==(Flags, Flags) = default;

 private:
  std::uint16_t bits_ = 0;
};

// "inexact|underflow|tiny_to_zero", or "none".
std::string describe(Flags f);

// Per-tensor report: how many results raised each flag.
struct FlagCounts {
  std::uint64_t values = 0;
  std::array<std::uint64_t, flag_count> count{};
  [[nodiscard]] std::uint64_t operator[](Flag f) const { return count[static_cast<unsigned>(f)]; }
  void add(Flags f) { add(f, 1); }
  // `times` values, each with flags f.
  void add(Flags f, std::uint64_t times) {
    values += times;
    for (int i = 0; i < flag_count; ++i) count[i] += ((f.bits() >> i) & 1u) * times;
  }
  FlagCounts& operator+=(const FlagCounts& o) {
    values += o.values;
    for (int i = 0; i < flag_count; ++i) count[i] += o.count[i];
    return *this;
  }
};

}  // namespace fmtcheck
