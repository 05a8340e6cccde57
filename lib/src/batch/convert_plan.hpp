// What the SIMD batch kernel needs to know about one (format, policy) pair,
// derived once from the format description and the policy with the same
// helpers the core uses (Format's facts, nan_code). Internal to lib/src.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/policy.hpp"
#include "fmtcheck/core/round_to_format.hpp"

namespace fmtcheck::detail {

// How the kernel turns a float32 into the format's code.
enum class Route : std::uint8_t {
  // Rounds the mantissa (and shifts it below the lowest binade): the signed
  // formats with subnormals, from tf32 down to FP4.
  round,
  // E8M0, the OCP MX scale format: unsigned powers of two 2^-127 .. 2^127
  // and NaN, so a positive normal float32's code is its own exponent field,
  // plus one where the mantissa rounds up.
  power_of_two,
  // fp32 and fp64, which hold every float32 unchanged: a normal value or a
  // zero is its own result, without a flag, under every policy.
  exact,
};

struct ConvertPlan {
  const Format* format = nullptr;  // for the core, which takes every lane the kernel does not serve
  const Policy* policy = nullptr;
  Route route = Route::round;
  std::uint32_t mantissa_bits = 0;
  // Float32 exponent field of the format's smallest normal binade; below it
  // results are subnormal (and, before rounding, tiny).
  std::uint32_t min_field = 0;
  std::uint32_t max_field = 0;           // float32 exponent field of the format's highest binade
  std::uint32_t max_finite = 0;          // magnitude code
  std::uint32_t sign_bit = 0;
  std::uint32_t pad_bits = 0;            // zero bits below the code in its container (tf32: 13)
  std::uint32_t overflow_code[2] = {};   // [sign]: full code of a non-saturated overflow (inf or NaN)
  bool overflow_is_nan = false;          // that code is a NaN made from a number
  bool negative_zero = false;            // the format keeps the sign of zero
  bool saturate_always = false;          // sat policy, or a format with neither inf nor NaN
  bool flush_inputs = false;             // daz
  bool flush_results = false;            // ftz
  bool tiny_after = false;               // tininess after rounding
  // The kernel leaves float32 subnormal inputs to the core where they fall
  // in the format's binade just below 2^emin or lower with tininess subtle
  // (formats with float32's exponent range, such as bf16); not under daz.
  bool subnormal_inputs_to_core = false;
  // fp16's encoding in a mode the CPU's F16C instruction has (all
  // deterministic ones but rna): it rounds, the kernel derives the rest
  // (where the target has it).
  bool hardware_fp16 = false;
  // An 8-bit format and a deterministic mode for which narrowing to bf16 by
  // round-to-odd loses nothing: every rounding boundary of the format lies
  // in bf16's normal range with at least two bits to spare.
  bool via_bf16 = false;
  std::uint32_t random_bit_count = 0;
  // Route::power_of_two: the core's result for every negative normal input
  // (a NaN: the format is unsigned) and for every value that overflows.
  Conversion negative_result, overflow_result;
};

// The (format, policy) pairs the kernel serves: exactly those that
// tests/batch proves against the core on all 2^32 float32 inputs in every CI
// run. The kernel is written for any format the plan accepts; a pair joins
// this list only together with its exhaustive test.
struct ProvenPair {
  const Format* format;
  Policy policy;
};
std::span<const ProvenPair> kernel_proven_pairs();

// The plan, or nullopt when the kernel does not serve this pair (it then
// must not be used: the core converts every value).
std::optional<ConvertPlan> make_convert_plan(const Format& f, const Policy& p);

}  // namespace fmtcheck::detail
