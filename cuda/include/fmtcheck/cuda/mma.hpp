// Single tensor-core instructions on chosen inputs, via inline PTX: one
// warp computes one mma.sync tile D = A·B + C (M = 16), one warpgroup one
// wgmma tile (M = 64, sm_90a; cuda/src/wgmma_kernels.cu).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fmtcheck/core/format.hpp"
#include "fmtcheck/cuda/fragment_layout.hpp"

namespace fmtcheck::cuda {

enum class MmaFamily : unsigned char { mma_sync, wgmma };

struct MmaInstruction {
  std::string_view ptx;  // the full mnemonic, e.g. "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
  MmaShape shape;        // mma.sync: the shape; wgmma: m64n8kK with this shape's K
  const Format* input;   // A and B
  const Format* output;  // C and D: fp32 or fp16
  int min_compute_capability;
  MmaFamily family = MmaFamily::mma_sync;
  [[nodiscard]] int m() const { return family == MmaFamily::wgmma ? 64 : 16; }
  [[nodiscard]] int n() const { return 8; }
  [[nodiscard]] int k() const;
  // Whether a GPU of compute capability cc runs it (wgmma: sm_90 only).
  [[nodiscard]] bool runs_on(int cc) const {
    return cc >= min_compute_capability && (family != MmaFamily::wgmma || cc < 100);
  }
};

// Every instruction the kernels implement.
std::span<const MmaInstruction> mma_instructions();
// The instruction of `family` for (input, output), or nullptr.
const MmaInstruction* find_mma_instruction(const Format& input, const Format& output,
                                           MmaFamily family = MmaFamily::mma_sync);

// A batch of independent tiles, as container bits in 32-bit words (tf32:
// float32 bits, whose low 13 bits the tensor core ignores; fp16 output: the
// 16-bit code). With M = ins.m(): tile t of A is a[t*M*K ...], row-major M×K;
// tile t of B is b[t*8*K ...], one column of K values after another (B is
// K×8, col-major); tile t of C is c[t*M*8 ...], row-major M×8.
struct MmaTiles {
  std::size_t count = 0;
  std::vector<std::uint32_t> a, b, c;
};

// Throws std::invalid_argument when the sizes disagree with count and the
// instruction's shape, or a word holds bits outside its format's container.
void check_tiles(const MmaInstruction& ins, const MmaTiles& tiles);

// D for every tile (same layout as C), computed by `ins` on device 0.
// Checks the tiles and the device's compute capability first.
std::vector<std::uint32_t> run_mma(const MmaInstruction& ins, const MmaTiles& tiles);

}  // namespace fmtcheck::cuda
