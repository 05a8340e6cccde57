// Conversions done by the GPU's cvt instructions, element-wise over arrays,
// to be compared bit for bit with fmtcheck's own conversions.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/policy.hpp"

namespace fmtcheck::cuda {

// One float32 -> format cvt instruction.
struct DeviceConversion {
  const Format* target;
  Rounding rounding;
  int min_compute_capability;  // 80, 89 or 90
  std::string_view ptx;        // the instruction, as written in the kernel
  // The emulator policy that should give the same bits: the instruction's
  // rounding, SATFINITE for fp8 (hardware has no other fp8 cvt) and NVIDIA's
  // NaN convention.
  [[nodiscard]] Policy policy() const;
};

// What the instruction gives for the float32 bits x: the emulator's
// conversion under conv.policy(), except where the hardware follows a rule
// no policy expresses, measured on an H100 (docs/hardware.md):
// cvt.rna.tf32.f32 cuts a NaN's low 13 bits, x & ~0x1FFF, so a NaN whose
// payload lies in those bits comes out as an infinity (cvt.rn and cvt.rz give
// the one NaN 0x7FFFE000).
std::uint32_t expected_conversion(const DeviceConversion& conv, std::uint32_t x);

// Every conversion the kernels implement.
std::span<const DeviceConversion> device_conversions();
// The cvt for (format, rounding), or nullptr when the ISA has none.
const DeviceConversion* find_device_conversion(const Format& target, Rounding rounding);

// float32 -> container bits of conv.target (tf32: float32 bits), on device 0.
// Throws std::invalid_argument when the device's compute capability is below
// conv.min_compute_capability, std::runtime_error on CUDA errors.
std::vector<std::uint32_t> convert_on_device(const DeviceConversion& conv, std::span<const float> in);

// Container bits of `from` (fp16, bf16, tf32, e4m3, e5m2) -> float32 bits on
// device 0 (fp16: cvt.f32.f16; fp8: cvt.rn.f16x2.e4m3x2/e5m2x2 then to f32;
// bf16 and tf32: the register reinterpreted, which is exact). Throws
// std::invalid_argument for another format or bits wider than it.
std::vector<std::uint32_t> widen_on_device(const Format& from, std::span<const std::uint32_t> bits);
// What widen_on_device gives for one code: cvt's widening with NVIDIA's NaN
// (every NaN becomes 0x7FFFFFFF, measured on an H100); for bf16 and tf32,
// moved into place, which is the exact value and keeps a NaN's bits (a
// signaling NaN stays signaling, where a conversion would quiet it).
std::uint32_t expected_widening(const Format& from, std::uint32_t bits);

}  // namespace fmtcheck::cuda
