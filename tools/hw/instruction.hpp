// The --instr/--type/--out options that `hw mma` and `hw probe` share, and
// the instruction they name.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "fmtcheck/cuda/mma.hpp"

namespace fmtcheck::cli {

struct InstructionOptions {
  std::string instr = "mma";  // mma (mma.sync) or wgmma
  std::string type, out = "fp32";
};

void add_instruction_options(CLI::App& sub, InstructionOptions& o);
// The mma.sync or wgmma instruction the options name; UsageError for pairs
// the ISA does not have.
const cuda::MmaInstruction& instruction_from(const InstructionOptions& o);

}  // namespace fmtcheck::cli
