// The probe suite's inference, fed with outputs of fmtcheck's tensor-core
// models instead of hardware: it must recover each model's parameters (the
// expected values are the models' own fields and the documented special-value
// rules, never the inference's output).
#include <doctest/doctest.h>

#include <stdexcept>

#include "fmtcheck/cuda/probe.hpp"

using namespace fmtcheck;
using namespace fmtcheck::cuda;

namespace {

// K of the mma.sync shape for each input type.
int k_for(const Format& input) {
  if (input == formats::tf32) return 8;
  if (input == formats::e4m3 || input == formats::e5m2) return 32;
  return 16;
}

void check_recovers(const DotModel& model, const ProbeTarget& t) {
  const InferredArithmetic found = infer_arithmetic(t, model_oracle(model, t));
  const bool fp32 = t.output == formats::fp32;

  if (model.block_size == DotModel::whole_k || model.block_size >= t.k) {
    CHECK(found.block_covers_k);
  } else {
    CHECK_FALSE(found.block_covers_k);
    CHECK(found.block_size == model.block_size);
  }
  if (model.fraction_bits == DotModel::exact_alignment) {
    CHECK(found.alignment_exact);
  } else {
    CHECK_FALSE(found.alignment_exact);
    CHECK(found.fraction_bits == model.fraction_bits);
  }
  CHECK_FALSE(found.output_bits_bound);
  CHECK(found.output_fraction_bits == (fp32 ? model.fp32_fraction_bits : 10));
  CHECK(found.output_rounding == (fp32 ? model.fp32_rounding : model.fp16_rounding));
  // The model never lets a zero product set e_max; measurable where a term
  // can be cut and the tiny witness fits the output.
  if (found.zero_terms_align) CHECK_FALSE(*found.zero_terms_align);
  if (fp32 && !found.alignment_exact) CHECK(found.zero_terms_align.has_value());
  if (t.input == formats::tf32) CHECK(found.tf32_operands_rounded == false);

  // tensor_core.hpp: any NaN, inf*0 or inf-inf gives the canonical NaN; an
  // infinite term otherwise gives that infinity.
  const std::uint64_t nan = fp32 ? 0x7FFFFFFF : 0x7FFF;
  const std::uint64_t inf = fp32 ? 0x7F800000 : 0x7C00;
  CHECK(found.nan_operand == nan);
  if (t.input.has_inf()) {
    CHECK(found.inf_times_zero == nan);
    CHECK(found.inf_minus_inf == nan);
    CHECK(found.inf_plus_finite == inf);
  } else {
    CHECK_FALSE(found.inf_times_zero.has_value());
  }
}

}  // namespace

TEST_CASE("the probes recover every preset's parameters, fp32 and fp16 output") {
  for (const TensorCoreModel& m : tensor_core_models()) {
    for (const TensorCoreModel::Entry& e : m.entries) {
      // A structure other than one fused block has no single L and F to
      // recover (tests/tensor_core pins those by hand-built cases).
      if (e.dot.structure != DotStructure::fused) continue;
      const Format input = format_from_string(e.input);
      for (const Format& out : {formats::fp32, formats::fp16}) {
        if (out == formats::fp16 && !e.dot.writes_fp16) continue;
        CAPTURE(m.name);
        CAPTURE(e.input);
        CAPTURE(out.name);
        check_recovers(e.dot, {input, out, k_for(input)});
      }
    }
  }
}

TEST_CASE("the probes recover parameters no preset has") {
  auto model = [](int l, int f, Rounding r, int p) {
    DotModel m;
    m.block_size = l;
    m.fraction_bits = f;
    m.fp32_rounding = r;
    m.fp32_fraction_bits = p;
    return m;
  };
  // Within the probes' reach: the output rounding shows when a quarter ulp
  // survives alignment, F >= P + 2 - m, where the last block holds
  // 2^(m-1) + 2 products (the base then lies m binades above e_max).
  const DotModel models[] = {model(4, 20, Rounding::rup, 20), model(8, 16, Rounding::rna, 14),
                             model(4, 26, Rounding::rto, 23), model(12, 22, Rounding::rdn, 20),
                             model(3, DotModel::exact_alignment, Rounding::rne, 23),
                             model(16, 13, Rounding::rup, 13), model(5, 14, Rounding::rne, 11)};
  for (const DotModel& m : models) {
    for (const Format& input : {formats::fp16, formats::bf16, formats::e5m2}) {
      CAPTURE(m.block_size);
      CAPTURE(m.fraction_bits);
      CAPTURE(input.name);
      check_recovers(m, {input, formats::fp32, k_for(input)});
    }
  }
}

TEST_CASE("beyond their reach the probes give a bound and no rounding") {
  // L = 4, F = 20: the last block's carry lifts the sum 2 binades above e_max,
  // so a surviving term reaches 22 fraction bits, not the model's 23.
  DotModel m;
  m.block_size = 4;
  m.fraction_bits = 20;
  m.fp32_rounding = Rounding::rup;
  const ProbeTarget t{formats::fp16, formats::fp32, 16};
  const InferredArithmetic found = infer_arithmetic(t, model_oracle(m, t));
  CHECK(found.block_size == 4);
  CHECK(found.fraction_bits == 20);
  CHECK(found.output_bits_bound);
  CHECK(found.output_fraction_bits == 22);
  CHECK_FALSE(found.output_rounding.has_value());
}

TEST_CASE("an oracle no rounding mode explains gives no output rounding") {
  const ProbeTarget t{formats::fp16, formats::fp32, 16};
  // Always +1: terms never vanish and never round to a neighbour.
  const DotOracle constant = [](std::span<const std::uint64_t>, std::span<const std::uint64_t>, std::uint64_t) {
    return std::uint64_t{0x3F800000};
  };
  const InferredArithmetic found = infer_arithmetic(t, constant);
  CHECK_FALSE(found.output_rounding.has_value());
  CHECK(found.fraction_bits == 0);  // the first probe's term already "vanished"
}

TEST_CASE("probe targets are checked") {
  const DotOracle unused = [](std::span<const std::uint64_t>, std::span<const std::uint64_t>, std::uint64_t) {
    return std::uint64_t{0};
  };
  CHECK_THROWS_AS(infer_arithmetic({formats::fp16, formats::bf16, 16}, unused), std::invalid_argument);
  CHECK_THROWS_AS(infer_arithmetic({formats::fp16, formats::fp32, 2}, unused), std::invalid_argument);
}

TEST_CASE("compare_with_model puts a differing parameter next to the model's") {
  const ProbeTarget t{formats::fp16, formats::fp32, 16};
  const DotModel ampere = *find_tensor_core_model("ampere")->for_input(formats::fp16);
  const DotModel hopper = *find_tensor_core_model("hopper")->for_input(formats::fp16);
  const InferredArithmetic from_hopper = infer_arithmetic(t, model_oracle(hopper, t));
  const InferredArithmetic from_ampere = infer_arithmetic(t, model_oracle(ampere, t));
  for (const ParameterRow& row : compare_with_model(t, from_hopper, hopper, from_hopper)) {
    CAPTURE(row.parameter);
    CHECK(row.agrees);
  }
  // Hopper's L = 16 and F = 25 against Ampere's L = 8 and F = 24.
  int disagreements = 0;
  for (const ParameterRow& row : compare_with_model(t, from_hopper, ampere, from_ampere)) {
    if (row.parameter == "block size L") CHECK(row.inferred == ">= 16 (K)");
    if (row.parameter == "block size L" || row.parameter == "alignment bits F") CHECK_FALSE(row.agrees);
    disagreements += row.agrees ? 0 : 1;
  }
  CHECK(disagreements == 2);
}
