// The cases of a `hw mma` run written in the layout of the published
// tensor-core data (../shared/data/tensor-core/README.md, read by
// `fmtcheck mma --check`), so that a hardware run, once committed under
// docs/hardware/, is replayed through the emulator in CI without a GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fmtcheck/cuda/mma.hpp"

namespace fmtcheck::cli {

// One batch of tiles with the D the hardware computed and the emulator's.
struct MeasuredTiles {
  cuda::MmaTiles tiles;
  std::vector<std::uint32_t> hardware, emulator;
};

// Writes DIR/<type>/{a,b}_<tag>_<type>.txt, c_<tag>_fp32.txt and
// d_<tag>_<out>.txt: one case per output (row of A, column of B, C, the
// hardware's D), every value as float32 bits (codes widened exactly; tf32
// registers as they were, low bits included); and instruction.txt naming
// the instruction's PTX mnemonic for the D file. Per batch the first
// `per_batch` outputs are kept, then every output where hardware and
// emulator differ, up to `differing` in all.
void write_case_files(const std::string& dir, const std::string& tag, const cuda::MmaInstruction& ins,
                      const std::vector<MeasuredTiles>& batches, std::size_t per_batch, std::size_t differing);

}  // namespace fmtcheck::cli
