// The hardware rules that no emulator policy expresses, as the hw commands
// expect them (cuda/include/fmtcheck/cuda/convert.hpp). The expected bits are
// outputs an H100 gave (docs/hardware/NVIDIA-H100-80GB-HBM3/), not the
// functions' own.
#include <doctest/doctest.h>

#include "fmtcheck/cuda/convert.hpp"

using namespace fmtcheck;
using namespace fmtcheck::cuda;

TEST_CASE("cvt.rna.tf32.f32 cuts a NaN's low bits as an H100 does") {
  const DeviceConversion& rna = *find_device_conversion(formats::tf32, Rounding::rna);
  CHECK(expected_conversion(rna, 0x7f800001u) == 0x7f800000u);  // NaN -> +inf
  CHECK(expected_conversion(rna, 0x7f80000au) == 0x7f800000u);
  CHECK(expected_conversion(rna, 0x7f801000u) == 0x7f800000u);  // no rounding up: the bits are cut
  CHECK(expected_conversion(rna, 0x7f801009u) == 0x7f800000u);
  // Finite inputs follow the policy: ties away from zero.
  CHECK(expected_conversion(rna, 0x3f801000u) == 0x3f802000u);
  const DeviceConversion& rn = *find_device_conversion(formats::tf32, Rounding::rne);
  CHECK(expected_conversion(rn, 0x7f800001u) == 0x7fffe000u);  // cvt.rn: NVIDIA's one NaN
}

TEST_CASE("widening to fp32 as an H100 does it") {
  CHECK(expected_widening(formats::fp16, 0x7c01u) == 0x7fffffffu);  // cvt.f32.f16: every NaN the same
  CHECK(expected_widening(formats::fp16, 0xfe00u) == 0x7fffffffu);
  CHECK(expected_widening(formats::e4m3, 0xffu) == 0x7fffffffu);
  CHECK(expected_widening(formats::e5m2, 0x7du) == 0x7fffffffu);
  CHECK(expected_widening(formats::bf16, 0x7f81u) == 0x7f810000u);  // moved: a signaling NaN stays one
  CHECK(expected_widening(formats::tf32, 0x7f802000u) == 0x7f802000u);
  CHECK(expected_widening(formats::fp16, 0x3c00u) == 0x3f800000u);  // values are exact
  CHECK(expected_widening(formats::bf16, 0xc040u) == 0xc0400000u);
}
