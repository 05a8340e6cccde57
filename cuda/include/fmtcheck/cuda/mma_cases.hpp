// Test cases for one mma.sync instruction and the emulator's answer to them:
// which model stands for the instruction on a given GPU, random and
// adversarial tiles, the model's D and the comparison with the hardware's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fmtcheck/cuda/compare.hpp"
#include "fmtcheck/cuda/mma.hpp"
#include "fmtcheck/cuda/probe.hpp"
#include "fmtcheck/tensor_core/tensor_core.hpp"

namespace fmtcheck::cuda {

// The preset that models `ins` on a GPU of compute capability cc (80: ampere,
// 89: ada, 90: hopper). Where no published model covers the instruction,
// `model` is the nearest one and `known_gap` says why it may differ; model
// is nullptr when there is none at all.
struct ModelChoice {
  const TensorCoreModel* model = nullptr;
  std::string known_gap;
};
ModelChoice model_for(const MmaInstruction& ins, int compute_capability);

enum class CaseKind : std::uint8_t {
  random,    // finite values of moderate magnitude, some zeros and subnormals
  powers,    // ±2^e only: exact cancellations and cut terms in almost every output
  specials,  // random tiles with NaN, ±inf (where the format has them) and ±0 sprinkled in
};

// `count` tiles of one kind; the same seed gives the same tiles.
MmaTiles make_tiles(const MmaInstruction& ins, CaseKind kind, std::size_t count, std::uint64_t seed);

// D for every tile under `model` (same layout as tiles.c).
std::vector<std::uint32_t> emulate_tiles(const MmaInstruction& ins, const DotModel& model, const MmaTiles& tiles);

// Hardware D against emulated D, output by output; each difference names its
// tile, row and column and lists the row of A, the column of B and C in hex.
Comparison compare_tiles(const MmaInstruction& ins, const MmaTiles& tiles, const std::vector<std::uint32_t>& hardware,
                         const std::vector<std::uint32_t>& emulator, std::string title);

// The hardware as a probe oracle: a, b and c go to row 0 of A, column 0 of
// B and C[0][0] of one tile (everything else zero); the answer is D[0][0].
DotOracle mma_oracle(const MmaInstruction& ins);

}  // namespace fmtcheck::cuda
