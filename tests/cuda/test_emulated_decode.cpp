// On a GPU: codes decoded there (cuda/src/emulator/decode.cu) equal the
// CPU's decode bit for bit: every code of every preset of at most 16 bits,
// every P3109 member and user formats (float32 results, against
// decode_batch), formats float32 cannot hold (float64, against to_double),
// and fp32's and tf32's codes on a stride with their specials.
#include <doctest/doctest.h>

#include <bit>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "fmtcheck/batch/decode_batch.hpp"
#include "fmtcheck/core/decode.hpp"
#include "fmtcheck/cuda/emulated_convert.hpp"

using namespace fmtcheck;

namespace {

// Every code of a container of at most 16 bits; a 32-bit container's codes
// on an odd stride, plus its extremes and specials.
std::vector<std::uint32_t> codes_of(const Format& f) {
  std::vector<std::uint32_t> codes;
  if (f.storage_bits <= 16) {
    for (std::uint32_t c = 0; c < (1u << f.storage_bits); ++c) codes.push_back(c);
    return codes;
  }
  for (std::uint64_t c = 0; c < (std::uint64_t{1} << 32); c += 4099) codes.push_back(static_cast<std::uint32_t>(c));
  for (const std::uint32_t c : {0x00000001u, 0x007FFFFFu, 0x00800000u, 0x7F7FFFFFu, 0x7F800000u, 0x7F800001u,
                                0x7FC00000u, 0xFFFFFFFFu, 0x80000000u, 0xFF800000u, 0x80000001u}) {
    codes.push_back(c);
  }
  return codes;
}

// The number of codes that differ from the CPU's decode.
std::size_t differences(const Format& f) {
  CAPTURE(f.name);
  const std::vector<std::uint32_t> codes = codes_of(f);
  const cuda::GpuDecoded gpu = cuda::decode_on_gpu(codes, f);
  std::size_t differ = 0;
  if (float32_holds(f)) {
    REQUIRE(gpu.float32.size() == codes.size());
    std::vector<float> cpu(codes.size());
    if (f.storage_bits == 8) {
      decode_batch(std::vector<std::uint8_t>(codes.begin(), codes.end()), f, cpu);
    } else if (f.storage_bits == 16) {
      decode_batch(std::vector<std::uint16_t>(codes.begin(), codes.end()), f, cpu);
    } else {
      decode_batch(codes, f, cpu);
    }
    for (std::size_t i = 0; i < codes.size(); ++i) {
      differ += std::bit_cast<std::uint32_t>(gpu.float32[i]) != std::bit_cast<std::uint32_t>(cpu[i]);
    }
  } else {
    REQUIRE(gpu.float64.size() == codes.size());
    for (std::size_t i = 0; i < codes.size(); ++i) {
      differ += std::bit_cast<std::uint64_t>(gpu.float64[i]) != std::bit_cast<std::uint64_t>(to_double(f, codes[i]));
    }
  }
  CHECK_MESSAGE(differ == 0, differ, " of ", codes.size(), " codes of ", f.name, " decode differently");
  return differ;
}

}  // namespace

TEST_CASE("the GPU decodes every code as the CPU does") {
  int formats = 0;
  for (const Format& f : preset_formats()) {
    if (f.storage_bits <= 32) differences(f), ++formats;
  }
  for (const Format& f : p3109_formats()) differences(f), ++formats;
  for (const char* name : {"e6m9", "e9m6", "e11m4", "e9m22", "e3m4fn", "e5m2fnuz_b15"}) {
    differences(format_from_string(name)), ++formats;
  }
  MESSAGE(formats, " formats decoded on the GPU");
}

TEST_CASE("the GPU refuses to decode containers wider than 32 bits") {
  CHECK_THROWS_WITH_AS(cuda::decode_on_gpu(std::vector<std::uint32_t>{0}, formats::fp64),
                       "format fp64 has 64-bit containers; the GPU decodes formats of at most 32 bits",
                       std::invalid_argument);
}
