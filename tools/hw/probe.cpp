// fmtcheck hw probe: infer each instruction's arithmetic from the hardware
// alone (block size, alignment bits, output bits and rounding, zero terms,
// special values) and put it next to the model's parameters.
#ifdef FMTCHECK_HAS_CUDA
#include <fmt/format.h>

#include "common/output_file.hpp"
#include "common/table.hpp"
#include "fmtcheck/cuda/device.hpp"
#include "fmtcheck/cuda/mma_cases.hpp"
#include "fmtcheck/cuda/probe.hpp"
#include "hw/command.hpp"
#include "hw/instruction.hpp"

namespace fmtcheck::cli {
namespace {

struct ProbeArgs {
  InstructionOptions instruction;
  std::string csv;
};

int run_probe(const ProbeArgs& a) {
  const cuda::DeviceInfo d = cuda::require_device();  // no GPU: one line, exit 2
  const int cc = d.compute_capability();
  std::vector<const cuda::MmaInstruction*> chosen;
  if (a.instruction.type.empty()) {
    for (const cuda::MmaInstruction& i : cuda::mma_instructions()) {
      if (i.runs_on(cc)) chosen.push_back(&i);
    }
  } else {
    chosen.push_back(&instruction_from(a.instruction));
  }
  Table csv({"instruction", "model", "parameter", "hardware", "model_value", "agrees", "known_gap"});
  bool unexplained = false;
  for (const cuda::MmaInstruction* ins : chosen) {
    const cuda::ModelChoice choice = cuda::model_for(*ins, cc);
    if (!choice.model) throw UsageError("no model to compare with: " + choice.known_gap);
    const DotModel model = *choice.model->for_input(*ins->input);
    const cuda::ProbeTarget target{*ins->input, *ins->output, ins->k()};
    const cuda::InferredArithmetic found = cuda::infer_arithmetic(target, cuda::mma_oracle(*ins));
    const cuda::InferredArithmetic modelled = cuda::infer_arithmetic(target, cuda::model_oracle(model, target));
    Table t({"parameter", "hardware", choice.model->name, ""});
    for (const cuda::ParameterRow& row : cuda::compare_with_model(target, found, model, modelled)) {
      t.add_row({row.parameter, row.inferred, row.model, row.agrees ? "" : "DIFFERS"});
      csv.add_row({std::string(ins->ptx), choice.model->name, row.parameter, row.inferred, row.model,
                   row.agrees ? "yes" : "no", choice.known_gap});
      unexplained |= !row.agrees && choice.known_gap.empty();
    }
    fmt::print("{}\n", ins->ptx);
    if (!choice.known_gap.empty()) fmt::print("{}", wrap("  known gap: ", choice.known_gap, terminal_width));
    fmt::print("{}\n", t.aligned());
  }
  if (!a.csv.empty()) {
    OutputFile file(a.csv);
    file.write(csv.csv());
    file.commit();
  }
  fmt::print("{}\n", unexplained ? "FAIL: the hardware differs from its published model" : "PASS");
  return unexplained ? 1 : 0;
}

const bool registered = register_hw_command({
    "probe", "infer each instruction's arithmetic from the hardware alone, next to the model's parameters", 40,
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<ProbeArgs>();
      add_instruction_options(sub, a->instruction);
      sub.add_option("--csv", a->csv, "write the parameter table as CSV ('-': standard output)");
      return [a] { return run_probe(*a); };
    }});

}  // namespace
}  // namespace fmtcheck::cli
#endif
