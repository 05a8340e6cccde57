// The decimal and hex-float parser on arbitrary text: malformed text gives
// nullopt with a message; accepted text must then round to every kind of
// format (wide, narrow, no infinities) without any other error.
#include <stdexcept>

#include "fmtcheck/core/convert.hpp"
#include "fmtcheck/core/parse_number.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fmtcheck;
  const std::string_view text = fuzz::text(data, size);
  std::string error;
  const auto value = parse_number(text, &error);
  if (!value) {
    if (error.empty()) __builtin_trap();  // a refusal must say why
    return 0;
  }
  for (const Format& f : {formats::fp32, formats::fp64, formats::e4m3, formats::e8m0}) (void)convert_text(text, f);
  return 0;
}
