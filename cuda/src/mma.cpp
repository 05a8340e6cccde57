// The table of tensor-core instructions (mma.sync, wgmma) and their host
// entry point.
#include "fmtcheck/cuda/mma.hpp"

#include <array>
#include <stdexcept>

#include "device_buffer.hpp"
#include "fmtcheck/cuda/device.hpp"
#include "kernel_ops.hpp"

namespace fmtcheck::cuda {
namespace {

// In detail::MmaOp order, mma.sync then wgmma. wgmma takes fp16
// accumulators for fp16 and fp8 inputs, as mma.sync does; bf16 and tf32 only
// fp32.
constexpr int instruction_count = 2 * detail::mma_op_count;
const std::array<MmaInstruction, instruction_count>& table() {
  using S = MmaShape;
  constexpr MmaFamily wg = MmaFamily::wgmma;
  static const std::array<MmaInstruction, instruction_count> t = {{
      {"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", S::m16n8k16, &formats::fp16, &formats::fp32, 80},
      {"mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16", S::m16n8k16, &formats::fp16, &formats::fp16, 80},
      {"mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", S::m16n8k16, &formats::bf16, &formats::fp32, 80},
      {"mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", S::m16n8k8, &formats::tf32, &formats::fp32, 80},
      {"mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32", S::m16n8k32, &formats::e4m3, &formats::fp32, 89},
      {"mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16", S::m16n8k32, &formats::e4m3, &formats::fp16, 89},
      {"mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32", S::m16n8k32, &formats::e5m2, &formats::fp32, 89},
      {"mma.sync.aligned.m16n8k32.row.col.f16.e5m2.e5m2.f16", S::m16n8k32, &formats::e5m2, &formats::fp16, 89},
      {"wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16", S::m16n8k16, &formats::fp16, &formats::fp32, 90, wg},
      {"wgmma.mma_async.sync.aligned.m64n8k16.f16.f16.f16", S::m16n8k16, &formats::fp16, &formats::fp16, 90, wg},
      {"wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16", S::m16n8k16, &formats::bf16, &formats::fp32, 90, wg},
      {"wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32", S::m16n8k8, &formats::tf32, &formats::fp32, 90, wg},
      {"wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3", S::m16n8k32, &formats::e4m3, &formats::fp32, 90, wg},
      {"wgmma.mma_async.sync.aligned.m64n8k32.f16.e4m3.e4m3", S::m16n8k32, &formats::e4m3, &formats::fp16, 90, wg},
      {"wgmma.mma_async.sync.aligned.m64n8k32.f32.e5m2.e5m2", S::m16n8k32, &formats::e5m2, &formats::fp32, 90, wg},
      {"wgmma.mma_async.sync.aligned.m64n8k32.f16.e5m2.e5m2", S::m16n8k32, &formats::e5m2, &formats::fp16, 90, wg},
  }};
  return t;
}

void check_words(std::span<const std::uint32_t> words, const Format& f, const char* matrix) {
  const std::uint64_t allowed = f.storage_mask();
  for (const std::uint32_t w : words) {
    if ((w & ~allowed) != 0) {
      throw std::invalid_argument(std::string("mma: ") + matrix + " holds a word wider than " + f.name);
    }
  }
}

}  // namespace

int MmaInstruction::k() const { return shape == MmaShape::m16n8k8 ? 8 : shape == MmaShape::m16n8k16 ? 16 : 32; }

std::span<const MmaInstruction> mma_instructions() { return table(); }

const MmaInstruction* find_mma_instruction(const Format& input, const Format& output, MmaFamily family) {
  for (const MmaInstruction& i : table()) {
    if (*i.input == input && *i.output == output && i.family == family) return &i;
  }
  return nullptr;
}

void check_tiles(const MmaInstruction& ins, const MmaTiles& tiles) {
  const std::size_t k = static_cast<std::size_t>(ins.k());
  auto expect = [&](const std::vector<std::uint32_t>& v, std::size_t per_tile, const char* name) {
    if (v.size() != tiles.count * per_tile) {
      throw std::invalid_argument("mma: " + std::string(name) + " holds " + std::to_string(v.size()) + " words; " +
                                  std::to_string(tiles.count) + " tiles need " + std::to_string(tiles.count * per_tile));
    }
  };
  if (tiles.count == 0) throw std::invalid_argument("mma: no tiles");
  const std::size_t m = static_cast<std::size_t>(ins.m());
  expect(tiles.a, m * k, "A");
  expect(tiles.b, 8 * k, "B");
  expect(tiles.c, m * 8, "C");
  check_words(tiles.a, *ins.input, "A");
  check_words(tiles.b, *ins.input, "B");
  check_words(tiles.c, *ins.output, "C");
}

std::vector<std::uint32_t> run_mma(const MmaInstruction& ins, const MmaTiles& tiles) {
  const auto index = &ins - table().data();
  if (index < 0 || index >= instruction_count) throw std::invalid_argument("run_mma: not one of mma_instructions()");
  check_tiles(ins, tiles);
  const bool wgmma = ins.family == MmaFamily::wgmma;
  const LaunchConfig cfg = wgmma ? wgmma_launch(tiles.count) : mma_launch(tiles.count);
  const DeviceInfo d = require_device();
  if (!ins.runs_on(d.compute_capability())) {
    throw std::invalid_argument(std::string(ins.ptx) + " needs compute capability " +
                                std::to_string(ins.min_compute_capability) +
                                (ins.family == MmaFamily::wgmma ? " (sm_90a only)" : "") + "; " + d.name + " has " +
                                std::to_string(d.compute_capability()));
  }
  detail::DeviceBuffer<std::uint32_t> a(tiles.a), b(tiles.b), c(tiles.c), out(tiles.c.size());
  const auto op = static_cast<detail::MmaOp>(index % detail::mma_op_count);
  if (wgmma) {
    detail::launch_wgmma(op, a.get(), b.get(), c.get(), out.get(), tiles.count, cfg);
  } else {
    detail::launch_mma(op, a.get(), b.get(), c.get(), out.get(), tiles.count, cfg);
  }
  return out.to_host();
}

}  // namespace fmtcheck::cuda
