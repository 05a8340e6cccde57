// The published tensor-core parameters, one preset per architecture and
// instruction family. docs/tensor-core.md cites the source of each number;
// the A100 and H100 entries are checked bit for bit against measured GPU
// outputs in CI (tests/tensor_core).
#include <algorithm>
#include <stdexcept>

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
      {"hopper", "H100 (sm_90) mma.sync/wmma; MMA-Sim 2025, Khattak & Mikaitis 2025",
       {{"fp16", hw(16, 25)}, {"bf16", hw(16, 25)}, {"tf32", hw(8, 25)}}},
      {"hopper-wgmma", "H100 (sm_90a) wgmma; MMA-Sim 2025, Khattak & Mikaitis 2025",
       {{"fp16", hw(16, 25)}, {"bf16", hw(16, 25)}, {"tf32", hw(8, 25)},
        {"e4m3", hw_fp8(32, 13)}, {"e5m2", hw_fp8(32, 13)}}},
      // Blackwell keeps F = 25 for FP8 too, and its fp32 results all 23
      // fraction bits (no 13-bit truncation); L is the instruction's K.
      {"blackwell", "B200 (sm_100a) tcgen05.mma kind::f16/tf32/f8f6f4; MMA-Sim 2025, Khattak & Mikaitis 2025",
       {{"fp16", hw(16, 25)}, {"bf16", hw(16, 25)}, {"tf32", hw(8, 25)},
        {"e4m3", hw(32, 25)}, {"e5m2", hw(32, 25)}}},
      {"blackwell-rtx", "RTX 50 (sm_120a) mma.sync m16n8k16/k8/k32; MMA-Sim 2025",
       {{"fp16", hw(16, 25)}, {"bf16", hw(16, 25)}, {"tf32", hw(8, 25)},
        {"e4m3", hw(32, 25)}, {"e5m2", hw(32, 25)}}},
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

const TensorCoreModel& tensor_core_model(std::string_view name) {
  if (const TensorCoreModel* m = find_tensor_core_model(name)) return *m;
  std::string names;
  for (const TensorCoreModel& m : all_models()) names += (names.empty() ? "" : ", ") + m.name;
  throw std::invalid_argument("unknown --model '" + std::string(name) + "': expected one of " + names);
}

}  // namespace fmtcheck
