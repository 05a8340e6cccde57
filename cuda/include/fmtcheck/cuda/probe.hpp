// The probe suite: infers a tensor-core instruction's arithmetic from its
// outputs alone, in the manner of Fasi et al. 2021 and MMA-Sim (arXiv
// 2511.10909). Each probe is a dot product d = sum a[k]*b[k] + c with
// chosen powers of two, so every question has a yes/no answer:
//   block size L        when does a tiny term stop vanishing beside big − big?
//   fraction bits F     how far below the largest term does a term survive?
//   output bits         how many fraction bits does a sum above e_max keep?
//   output rounding     quarter, half and three-quarter ulps, both signs
//   zero terms          does 0 × 2^max join the alignment as a big exponent?
//   tf32 operands       are the low 13 bits of an fp32 register cut or rounded?
//   special values      the bits of NaN, inf×0, inf−inf and inf + finite
// The oracle is the hardware (one tile through the instruction) or, in the
// tests, one of fmtcheck's tensor-core models, whose parameters the
// inference must recover.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/policy.hpp"
#include "fmtcheck/tensor_core/tensor_core.hpp"

namespace fmtcheck::cuda {

// d = sum a[k]*b[k] + c for K operands of `input` (container bits; tf32 as
// float32 bits) and c, d in the output format's container bits.
using DotOracle = std::function<std::uint64_t(std::span<const std::uint64_t> a, std::span<const std::uint64_t> b,
                                              std::uint64_t c)>;

struct ProbeTarget {
  Format input;
  Format output;  // fp32 or fp16
  int k = 0;      // the instruction's K: every probe has exactly K products
};

// What the probes found. A "bound" flag means the probes could only show
// that the parameter is at least the value (the instruction's K, or the
// widest gap the formats can express).
struct InferredArithmetic {
  int block_size = 0;  // L: products fused with C per rounding step
  bool block_covers_k = false;
  bool alignment_exact = false;  // no term was ever cut: F below is the widest gap tried
  int fraction_bits = 0;         // F
  int output_fraction_bits = 0;  // fp32 output: 23, or 13 on FP8; fp16: 10
  bool output_bits_bound = false;
  std::optional<Rounding> output_rounding;  // nullopt: no single mode explains the probes
  std::optional<bool> zero_terms_align;     // nullopt: not measurable here (fp16 output, exact alignment)
  std::optional<bool> tf32_operands_rounded;  // tf32 only: false = low 13 bits cut
  // Output bits of the special-value probes; nullopt where the input format
  // cannot express the case (e4m3 has no infinity).
  std::uint64_t nan_operand = 0;
  std::optional<std::uint64_t> inf_times_zero, inf_minus_inf, inf_plus_finite;
};

// Runs every probe through `oracle`. Throws std::invalid_argument when the
// target is not a tensor-core input/output pair or K is below 4.
InferredArithmetic infer_arithmetic(const ProbeTarget& target, const DotOracle& oracle);

// The oracle of a model: fmtcheck's dot_product_add.
DotOracle model_oracle(const DotModel& model, const ProbeTarget& target);

// One row per parameter: the inferred value next to the model's and whether
// they agree (a bound agrees with any model value at or above it; a
// parameter the probes cannot measure for this target agrees).
struct ParameterRow {
  std::string parameter, inferred, model;
  bool agrees = false;
};
// `model_specials` holds what the same probes find on the model
// (infer_arithmetic run on model_oracle): the expected special-value
// outputs, since the model defines them, and for a model that is not one
// fused block (DotStructure) the expected value of every parameter.
std::vector<ParameterRow> compare_with_model(const ProbeTarget& target, const InferredArithmetic& found,
                                             const DotModel& model, const InferredArithmetic& model_specials);

}  // namespace fmtcheck::cuda
