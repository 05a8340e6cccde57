// Batch decoding (decode_batch) on every code of every 8- and 16-bit preset
// and of tf32 (a stride of fp32's), through the SIMD kernels (every target
// the CPU runs), the table path and the value-by-value path, against the
// scalar decode (to_double, itself proven against NVIDIA, Eigen and
// ml_dtypes in the oracle suites), and for fp16, bf16 and E5M2 also against
// independent definitions: the CPU's F16C conversion, bf16 being float32's
// top half and E5M2 fp16's top byte.
#include <doctest/doctest.h>
#include <immintrin.h>

#include <hwy/targets.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "batch/decode_fast.hpp"
#include "fmtcheck/batch/decode_batch.hpp"
#include "fmtcheck/core/decode.hpp"

namespace {

using namespace fmtcheck;

std::uint32_t expected_bits(const Format& f, std::uint64_t code) {
  return std::bit_cast<std::uint32_t>(static_cast<float>(to_double(f, code)));
}

// Every code, forward then backward, `rounds` times: long enough for the
// table path when rounds >= 4 (decode_batch takes it from 4 tables' worth).
template <typename In>
std::vector<In> every_code(const Format& f, int rounds) {
  std::vector<In> codes;
  const std::size_t count = std::size_t{1} << f.storage_bits;
  for (int r = 0; r < rounds; ++r) {
    for (std::size_t c = 0; c < count; ++c) codes.push_back(static_cast<In>(r % 2 == 0 ? c : count - 1 - c));
  }
  return codes;
}

template <typename In>
std::size_t wrong_values(const Format& f, std::span<const float> out, std::span<const In> codes) {
  std::size_t bad = 0;
  for (std::size_t i = 0; i < codes.size(); ++i) bad += std::bit_cast<std::uint32_t>(out[i]) != expected_bits(f, codes[i]);
  return bad;
}

// decode_batch of every code from the `skip`th on: skip > 0 gives the SIMD
// kernel unaligned input and a tail of less than a vector.
template <typename In>
std::size_t mismatches(const Format& f, int rounds, std::size_t skip) {
  const std::vector<In> codes = every_code<In>(f, rounds);
  const std::span<const In> batch = std::span<const In>(codes).subspan(skip);
  std::vector<float> out(batch.size());
  decode_batch(batch, f, out);
  return wrong_values(f, out, batch);
}

__attribute__((target("f16c"))) float f16c_decode(std::uint16_t h) { return _cvtsh_ss(h); }

}  // namespace

TEST_CASE("decode_batch == the scalar decode on every code of every 8- and 16-bit preset and P3109 member") {
  std::vector<Format> all(preset_formats().begin(), preset_formats().end());
  all.insert(all.end(), p3109_formats().begin(), p3109_formats().end());
  for (const Format& f : all) {
    if (f.storage_bits > 16) continue;
    CAPTURE(f.name);
    for (const int rounds : {1, 4}) {  // value by value, then the table (formats with a kernel: it both times)
      for (const std::size_t skip : {0, 3}) {
        CAPTURE(rounds);
        CAPTURE(skip);
        CHECK((f.storage_bits == 8 ? mismatches<std::uint8_t>(f, rounds, skip)
                                   : mismatches<std::uint16_t>(f, rounds, skip)) == 0);
      }
    }
  }
}

TEST_CASE("decode_batch == the scalar decode on every tf32 code (with padding bits set too) and a stride of fp32's") {
  // tf32: each code in its container, then with a varying pattern in the 13
  // padding bits, which both decodes ignore.
  std::vector<std::uint32_t> tf32;
  for (std::uint32_t code = 0; code < (1u << 19); ++code) {
    tf32.push_back(code << 13);
    tf32.push_back(code << 13 | ((code * 2654435761u) >> 19));
  }
  // fp32: every 4099th bit pattern, and every pattern next to the infinities.
  std::vector<std::uint32_t> fp32;
  for (std::uint64_t b = 0; b < (std::uint64_t{1} << 32); b += 4099) fp32.push_back(static_cast<std::uint32_t>(b));
  for (const std::uint32_t inf : {0x7F800000u, 0xFF800000u}) {
    for (std::uint32_t d = 0; d < 4096; ++d) {
      fp32.push_back(inf - 2048 + d);
    }
  }
  for (const auto& [f, codes] : {std::pair{&formats::tf32, &tf32}, std::pair{&formats::fp32, &fp32}}) {
    CAPTURE(f->name);
    std::vector<float> out(codes->size());
    decode_batch(std::span<const std::uint32_t>(*codes), *f, out);
    CHECK(wrong_values(*f, out, std::span<const std::uint32_t>(*codes)) == 0);
  }
}

TEST_CASE("decode_batch of fp16 and bf16 == F16C and float32's top half, every non-NaN code") {
  const std::vector<std::uint16_t> codes = every_code<std::uint16_t>(formats::fp16, 4);
  std::vector<float> fp16(codes.size());
  std::vector<float> bf16(codes.size());
  decode_batch(std::span<const std::uint16_t>(codes), formats::fp16, fp16);
  decode_batch(std::span<const std::uint16_t>(codes), formats::bf16, bf16);
  const bool have_f16c = __builtin_cpu_supports("f16c");
  std::size_t bad = 0;
  for (std::size_t i = 0; i < codes.size(); ++i) {
    const float bf16_expected = std::bit_cast<float>(std::uint32_t{codes[i]} << 16);
    if (!std::isnan(bf16_expected)) bad += std::bit_cast<std::uint32_t>(bf16[i]) != std::bit_cast<std::uint32_t>(bf16_expected);
    if (have_f16c && !std::isnan(fp16[i])) {
      bad += std::bit_cast<std::uint32_t>(fp16[i]) != std::bit_cast<std::uint32_t>(f16c_decode(codes[i]));
    }
  }
  CHECK(bad == 0);
  if (!have_f16c) MESSAGE("SKIPPED: this CPU has no F16C; fp16 checked against the scalar decode only");
}

// decode_batch hands these formats to the kernels; here the kernels must
// decode every code of a long batch themselves, on each SIMD target
// Highway compiled that the CPU runs (picked with SetSupportedTargetsForTest):
// bf16, tf32, fp32 and the 8-bit formats on every one, fp16 (vcvtph2ps)
// on AVX2 and above, which imply F16C, and none below, where decode_batch
// takes its table.
TEST_CASE("the SIMD kernels decode every code of a long batch themselves, every target") {
  const std::vector<std::uint16_t> codes = every_code<std::uint16_t>(formats::fp16, 4);
  const std::vector<std::uint8_t> bytes = every_code<std::uint8_t>(formats::e4m3, 4);
  std::vector<std::uint32_t> words;  // every tf32 code, then fp32 patterns around the specials and zero
  for (std::uint32_t code = 0; code < (1u << 19); ++code) words.push_back(code << 13);
  for (const std::uint32_t centre : {0x7F800000u, 0xFF800000u, 0x00000000u, 0x80000000u}) {
    for (std::uint32_t d = 0; d < 4096; ++d) words.push_back(centre - 2048 + d);
  }
  std::vector<float> out(std::max(codes.size(), words.size()));
  hwy::SetSupportedTargetsForTest(0);
  const std::vector<std::int64_t> targets = hwy::SupportedAndGeneratedTargets();
  for (const std::int64_t target : targets) {
    const std::string target_name = hwy::TargetName(target);
    CAPTURE(target_name);
    hwy::SetSupportedTargetsForTest(target);
    CHECK(detail::decode_bf16_fast(codes.data(), codes.size(), out.data()) == codes.size());
    CHECK(wrong_values<std::uint16_t>(formats::bf16, out, codes) == 0);
    const bool f16c = target <= HWY_AVX2;  // lower bits are the better targets
    CHECK(detail::decode_fp16_fast(codes.data(), codes.size(), out.data()) == (f16c ? codes.size() : 0));
    if (f16c) CHECK(wrong_values<std::uint16_t>(formats::fp16, out, codes) == 0);
    for (const Format& f : preset_formats()) {
      CAPTURE(f.name);
      const auto k = detail::small_float_decode(f);
      // Every 8-bit preset but E8M0, whose lowest binade lies below float32's normals.
      CHECK(k.has_value() == (f.storage_bits == 8 && f.has_subnormals));
      if (!k) continue;
      CHECK(detail::decode_small_float_fast(*k, bytes.data(), bytes.size(), out.data()) == bytes.size());
      CHECK(wrong_values<std::uint8_t>(f, std::span<const float>(out).first(bytes.size()), bytes) == 0);
    }
    for (const auto& [f, mask] : {std::pair{&formats::tf32, 0xFFFFE000u}, std::pair{&formats::fp32, ~0u}}) {
      CAPTURE(f->name);
      CHECK(detail::decode_float32_fast(words.data(), words.size(), mask, out.data()) == words.size());
      CHECK(wrong_values<std::uint32_t>(*f, out, words) == 0);
    }
  }
  hwy::SetSupportedTargetsForTest(0);
  MESSAGE(targets.size() << " targets run");
  CHECK(!targets.empty());
}

// E5M2 is fp16's top byte: every non-NaN code against F16C on code << 8.
TEST_CASE("decode_batch of e5m2 == F16C on the code as fp16's top byte, every non-NaN code") {
  if (!__builtin_cpu_supports("f16c")) {
    MESSAGE("SKIPPED: this CPU has no F16C");
    return;
  }
  const std::vector<std::uint8_t> codes = every_code<std::uint8_t>(formats::e5m2, 4);
  std::vector<float> out(codes.size());
  decode_batch(std::span<const std::uint8_t>(codes), formats::e5m2, out);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < codes.size(); ++i) {
    const float expected = f16c_decode(static_cast<std::uint16_t>(codes[i] << 8));
    if (!std::isnan(expected)) bad += std::bit_cast<std::uint32_t>(out[i]) != std::bit_cast<std::uint32_t>(expected);
  }
  CHECK(bad == 0);
}

// Every code of two formats of one container width decoded under MXCSR
// round-toward-zero with FTZ and DAZ: the scalar decode's bits under the
// default MXCSR must come out.
template <typename In>
void check_under_mxcsr(const Format& a, const Format& b) {
  const std::vector<In> codes = every_code<In>(a, 4);
  std::vector<float> out_a(codes.size());
  std::vector<float> out_b(codes.size());
  const unsigned saved = _mm_getcsr();
  _mm_setcsr(saved | _MM_ROUND_TOWARD_ZERO | _MM_FLUSH_ZERO_ON | _MM_DENORMALS_ZERO_ON);
  decode_batch(std::span<const In>(codes), a, out_a);
  decode_batch(std::span<const In>(codes), b, out_b);
  _mm_setcsr(saved);
  CHECK(wrong_values<In>(a, out_a, codes) == 0);
  CHECK(wrong_values<In>(b, out_b, codes) == 0);
}

// vcvtph2ps does not read MXCSR.RC, and the kernels' other steps are integer
// ones but two in the 8-bit kernel: a subnormal's mantissa converted to
// float32 and multiplied by a power of two, both exact with no float32
// subnormal operand or result. So neither the mode nor FTZ/DAZ may change
// a result (fp16's and bf16's subnormals included).
TEST_CASE("decode_batch of every 8- and 16-bit preset's codes under MXCSR round-toward-zero, FTZ and DAZ") {
  check_under_mxcsr<std::uint16_t>(formats::fp16, formats::bf16);
  check_under_mxcsr<std::uint8_t>(formats::e4m3, formats::e5m2);
  check_under_mxcsr<std::uint8_t>(formats::e4m3fnuz, formats::e5m2fnuz);
  check_under_mxcsr<std::uint8_t>(formats::e2m3, formats::e3m2);
  check_under_mxcsr<std::uint8_t>(formats::e2m1, formats::e8m0);
}

TEST_CASE("decode_batch of the 32-bit presets and bad calls") {
  const std::vector<std::uint32_t> tf32 = {0x3F800000u, 0x3F801FFFu, 0xFF800000u, 0x00002000u, 0x7F7FE000u};
  std::vector<float> out(tf32.size());
  decode_batch(std::span<const std::uint32_t>(tf32), formats::tf32, out);
  // The 13 padding bits are not part of the code.
  CHECK(out[0] == 1.0f);
  CHECK(out[1] == 1.0f);
  CHECK(out[2] == -INFINITY);
  CHECK(out[3] == std::ldexp(1.0f, -136));
  CHECK(out[4] == std::bit_cast<float>(0x7F7FE000u));

  const std::vector<std::uint8_t> one = {0};
  std::vector<float> none;
  CHECK_THROWS_AS(decode_batch(std::span<const std::uint8_t>(one), formats::e4m3, none), std::invalid_argument);
  CHECK_THROWS_AS(decode_batch(std::span<const std::uint8_t>(one), formats::fp16, out), std::invalid_argument);
  const std::vector<std::uint32_t> word = {0};
  // Biased down by 27, its top binades lie above float32's.
  CHECK_THROWS_AS(decode_batch(std::span<const std::uint32_t>(word), format_from_string("e8m23_b100"), out),
                  std::invalid_argument);
}
