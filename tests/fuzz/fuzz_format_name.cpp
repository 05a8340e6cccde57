// The format-name parser (presets, eXmY with its suffixes, the P3109
// binary8 names) on arbitrary text: a bad name gives nullopt and a message;
// an accepted one must describe a format whose facts can be computed.
#include "fmtcheck/core/facts.hpp"
#include "fmtcheck/core/format.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fmtcheck;
  std::string error;
  const auto format = parse_format(fuzz::text(data, size), &error);
  if (!format) {
    if (error.empty()) __builtin_trap();  // a refusal must say why
    return 0;
  }
  (void)facts(*format);
  return 0;
}
