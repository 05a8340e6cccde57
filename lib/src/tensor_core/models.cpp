// The published tensor-core parameters, one preset per architecture and
// instruction family. docs/tensor-core.md cites the source of each number;
// the A100, H100 and B200 FP8 entries are checked bit for bit against
// measured GPU outputs in CI (tests/tensor_core), the AMD ones against
// hand-built cases worked out in exact arithmetic.
#include <algorithm>

#include "fmtcheck/tensor_core/tensor_core.hpp"

namespace fmtcheck {
namespace {

// L, F with hardware output rounding: toward zero to fp32, nearest even to fp16.
DotModel hw(int block, int fraction_bits) {
  DotModel m;
  m.block_size = block;
  m.fraction_bits = fraction_bits;
  return m;
}

// FP8 on Ada and Hopper: the fp32 result keeps only 13 fraction bits.
DotModel hw_fp8(int block, int fraction_bits) {
  DotModel m = hw(block, fraction_bits);
  m.fp32_fraction_bits = 13;
  return m;
}

// Every product and C kept exactly, one rounding to nearest even per block.
DotModel exact_block(int block) {
  DotModel m;
  m.block_size = block;
  m.fp32_rounding = Rounding::rne;
  return m;
}

// FP8 mma.sync on Hopper and Blackwell: K = 32 through two fp16 blocks of 16
// (F = 25, the fp16 instruction's), C added last.
DotModel fp8_through_fp16() {
  DotModel m = hw(32, 25);
  m.structure = DotStructure::fp16_groups;
  return m;
}

// An AMD matrix core: one of the CDNA structures, nearest even to fp32, the
// only output.
DotModel amd(DotStructure structure, int block, int fraction_bits) {
  DotModel m;
  m.structure = structure;
  m.block_size = block;
  m.fraction_bits = fraction_bits;
  m.fp32_rounding = Rounding::rne;
  m.writes_fp16 = false;
  return m;
}

// CDNA3 (MI300A, MI300X): F = 24 (one bit beyond fp32's), L = 8 for fp16 and
// bf16, 4 for xf32 (tf32 values), 16 for its fnuz FP8 in odd and even halves.
const std::vector<TensorCoreModel::Entry> cdna3 = {
    {"fp16", amd(DotStructure::late_c, 8, 24)},       {"bf16", amd(DotStructure::late_c, 8, 24)},
    {"tf32", amd(DotStructure::late_c, 4, 24)},       {"e4m3fnuz", amd(DotStructure::odd_even, 16, 24)},
    {"e5m2fnuz", amd(DotStructure::odd_even, 16, 24)}};
// CDNA2 (MI210, MI250): pairwise fp32 additions over blocks of 4.
const std::vector<TensorCoreModel::Entry> cdna2 = {{"fp16", amd(DotStructure::pairwise, 4, DotModel::exact_alignment)},
                                                   {"bf16", amd(DotStructure::pairwise, 4, DotModel::exact_alignment)}};

const std::vector<TensorCoreModel>& all_models() {
  static const std::vector<TensorCoreModel> models = {
      {"volta", "V100 (sm_70) mma.sync/wmma; Fasi et al. 2021",
       {{"fp16", hw(4, 23)}}},
      {"turing", "T4 (sm_75) mma.sync/wmma, as Volta; Fasi et al. 2021",
       {{"fp16", hw(4, 23)}}},
      {"ampere", "A100 (sm_80) mma.sync/wmma; Fasi et al. 2021, Khattak & Mikaitis 2025",
       {{"fp16", hw(8, 24)}, {"bf16", hw(8, 24)}, {"tf32", hw(4, 24)}}},
      {"ada", "RTX 40 / L40 (sm_89) mma.sync; MMA-Sim 2025, Khattak & Mikaitis 2025",
       {{"fp16", hw(8, 24)}, {"bf16", hw(8, 24)}, {"tf32", hw(4, 24)},
        {"e4m3", hw_fp8(16, 13)}, {"e5m2", hw_fp8(16, 13)}}},
      {"hopper", "H100, H200 (sm_90) mma.sync/wmma, FP8 mma.sync through fp16 HMMA; MMA-Sim 2025, Khattak & Mikaitis 2025",
       {{"fp16", hw(16, 25)}, {"bf16", hw(16, 25)}, {"tf32", hw(8, 25)},
        {"e4m3", fp8_through_fp16()}, {"e5m2", fp8_through_fp16()}}},
      {"hopper-wgmma", "H100 (sm_90a) wgmma; MMA-Sim 2025, Khattak & Mikaitis 2025",
       {{"fp16", hw(16, 25)}, {"bf16", hw(16, 25)}, {"tf32", hw(8, 25)},
        {"e4m3", hw_fp8(32, 13)}, {"e5m2", hw_fp8(32, 13)}}},
      // B200's mma.sync, FP8 through fp16 as on Hopper: the structure the
      // published B200 FP8 data shows.
      {"blackwell", "B200 (sm_100) mma.sync, FP8 through fp16 HMMA; MMA-Sim 2025, B200 data of Khattak & Mikaitis",
       {{"fp16", hw(16, 25)}, {"bf16", hw(16, 25)}, {"tf32", hw(8, 25)},
        {"e4m3", fp8_through_fp16()}, {"e5m2", fp8_through_fp16()}}},
      // tcgen05 keeps F = 25 for FP8 too, and its fp32 results all 23
      // fraction bits (no 13-bit truncation); L is the instruction's K.
      {"blackwell-tcgen05", "B200 (sm_100a) tcgen05.mma kind::f16/tf32/f8f6f4; MMA-Sim 2025, Khattak & Mikaitis 2025",
       {{"fp16", hw(16, 25)}, {"bf16", hw(16, 25)}, {"tf32", hw(8, 25)},
        {"e4m3", hw(32, 25)}, {"e5m2", hw(32, 25)}}},
      {"blackwell-rtx", "RTX 50 (sm_120a) mma.sync m16n8k16/k8/k32; MMA-Sim 2025",
       {{"fp16", hw(16, 25)}, {"bf16", hw(16, 25)}, {"tf32", hw(8, 25)},
        {"e4m3", hw(32, 25)}, {"e5m2", hw(32, 25)}}},
      {"mi100", "AMD MI100 (CDNA1) MFMA: exact blocks of 4 (bf16: 2), nearest even; Khattak & Mikaitis 2025",
       {{"fp16", amd(DotStructure::fused, 4, DotModel::exact_alignment)},
        {"bf16", amd(DotStructure::fused, 2, DotModel::exact_alignment)}}},
      {"mi210", "AMD MI210 (CDNA2) MFMA: pairwise fp32 sums, subnormals flushed; Khattak & Mikaitis 2025", cdna2},
      {"mi250", "AMD MI250/MI250X (CDNA2) MFMA, as MI210; Khattak & Mikaitis 2025", cdna2},
      {"mi300a", "AMD MI300A (CDNA3) MFMA: L = 8, F = 24, C added late; Khattak & Mikaitis 2025", cdna3},
      {"mi300x", "AMD MI300X (CDNA3) MFMA, as MI300A; Khattak & Mikaitis 2025", cdna3},
      {"ideal-fp32", "not hardware: an fp32 FMA chain (each product exact, one RNE per k)",
       {{"fp16", exact_block(1)}, {"bf16", exact_block(1)}, {"tf32", exact_block(1)},
        {"e4m3", exact_block(1)}, {"e5m2", exact_block(1)}}},
      {"exact", "not hardware: the exact dot product plus C, rounded once to nearest even",
       {{"fp16", exact_block(DotModel::whole_k)}, {"bf16", exact_block(DotModel::whole_k)},
        {"tf32", exact_block(DotModel::whole_k)}, {"e4m3", exact_block(DotModel::whole_k)},
        {"e5m2", exact_block(DotModel::whole_k)}}},
  };
  return models;
}

}  // namespace

std::span<const TensorCoreModel> tensor_core_models() { return all_models(); }

const TensorCoreModel* find_tensor_core_model(std::string_view name) {
  const auto& models = all_models();
  const auto it = std::find_if(models.begin(), models.end(), [&](const TensorCoreModel& m) { return m.name == name; });
  return it == models.end() ? nullptr : &*it;
}

}  // namespace fmtcheck
