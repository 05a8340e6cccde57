#ifdef FMTCHECK_HAS_CUDA
#include "hw/instruction.hpp"

#include "common/command.hpp"
#include "common/options.hpp"

namespace fmtcheck::cli {

void add_instruction_options(CLI::App& sub, InstructionOptions& o) {
  sub.add_option("--instr", o.instr, "instruction family: mma (mma.sync) or wgmma (sm_90a)")
      ->capture_default_str();
  sub.add_option("--type", o.type, "input type: fp16, bf16, tf32, e4m3, e5m2");
  sub.add_option("--out", o.out, "accumulator and output: fp32 or fp16")->capture_default_str();
}

const cuda::MmaInstruction& instruction_from(const InstructionOptions& o) {
  if (o.instr != "mma" && o.instr != "wgmma") throw UsageError("bad --instr '" + o.instr + "': expected mma or wgmma");
  if (o.type.empty()) throw UsageError("--type is required");
  const Format in = parse_format_option(o.type);
  const Format out = parse_format_option(o.out);
  const bool wgmma = o.instr == "wgmma";
  const cuda::MmaInstruction* ins =
      cuda::find_mma_instruction(in, out, wgmma ? cuda::MmaFamily::wgmma : cuda::MmaFamily::mma_sync);
  if (!ins) {
    throw UsageError(std::string(wgmma ? "wgmma" : "mma.sync") + " has no " + in.name + " instruction with " + out.name +
                     " output");
  }
  return *ins;
}

}  // namespace fmtcheck::cli
#endif
