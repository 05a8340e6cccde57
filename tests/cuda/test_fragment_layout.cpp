// Fragment layouts and launch geometry: every element of A, B and C is held
// by exactly one (lane, slot), wgmma's shared-memory operands and
// descriptors agree with the canonical layout the hardware reads, and
// launches cover their work exactly.
#include <doctest/doctest.h>

#include <stdexcept>

#include <map>
#include <vector>
#include <utility>

#include "fmtcheck/cuda/fragment_layout.hpp"
#include "fmtcheck/cuda/launch.hpp"
#include "fmtcheck/cuda/mma.hpp"
#include "fmtcheck/cuda/wgmma_layout.hpp"

using namespace fmtcheck::cuda;

namespace {

// Holders of each (row, col): must be exactly rows×cols cells, each once.
template <class Coord>
void check_covers(int rows, int cols, int slots, Coord coord, int threads = 32) {
  std::map<std::pair<int, int>, int> holders;
  for (int lane = 0; lane < threads; ++lane) {
    for (int i = 0; i < slots; ++i) {
      const FragmentCoord x = coord(lane, i);
      REQUIRE(x.row >= 0);
      REQUIRE(x.row < rows);
      REQUIRE(x.col >= 0);
      REQUIRE(x.col < cols);
      ++holders[{x.row, x.col}];
    }
  }
  CHECK(holders.size() == static_cast<std::size_t>(rows * cols));
  for (const auto& [cell, count] : holders) CHECK(count == 1);
}

}  // namespace

TEST_CASE("every fragment covers its matrix once") {
  for (const MmaInstruction& ins : mma_instructions()) {
    if (ins.family != MmaFamily::mma_sync) continue;
    CAPTURE(ins.ptx);
    const MmaShape s = ins.shape;
    // 4 registers of A and 2 of B per lane, whatever the element width.
    CHECK(a_fragment_size(s) * ins.input->storage_bits == 4 * 32);
    CHECK(b_fragment_size(s) * ins.input->storage_bits == 2 * 32);
    check_covers(16, ins.k(), a_fragment_size(s), [&](int lane, int i) { return a_fragment(s, lane, i); });
    check_covers(ins.k(), 8, b_fragment_size(s), [&](int lane, int i) { return b_fragment(s, lane, i); });
    check_covers(16, 8, c_fragment_size, [](int lane, int i) { return c_fragment(lane, i); });
  }
}

TEST_CASE("PTX ISA fragment examples") {
  // m16n8k16 A: lane 5 (group 1, thread 1) holds a4 at row 1, column 10.
  CHECK(a_fragment(MmaShape::m16n8k16, 5, 4).row == 1);
  CHECK(a_fragment(MmaShape::m16n8k16, 5, 4).col == 10);
  // m16n8k8 (tf32) A: a1 of lane 0 is row 8, column 0.
  CHECK(a_fragment(MmaShape::m16n8k8, 0, 1).row == 8);
  CHECK(a_fragment(MmaShape::m16n8k8, 0, 1).col == 0);
  // m16n8k32 B: b5 of lane 6 (group 1, thread 2) is k = 2*4 + 1 + 16 = 25, n = 1.
  CHECK(b_fragment(MmaShape::m16n8k32, 6, 5).row == 25);
  CHECK(b_fragment(MmaShape::m16n8k32, 6, 5).col == 1);
  // C: c2 of lane 31 is row 15, column 6.
  CHECK(c_fragment(31, 2).row == 15);
  CHECK(c_fragment(31, 2).col == 6);
}

TEST_CASE("wgmma: D is held once by the warpgroup, as CUTLASS's CLayout_64x8 says") {
  check_covers(wgmma_m, wgmma_n, wgmma_d_fragment_size, [](int t, int i) { return wgmma_d_fragment(t, i); },
               wgmma_threads);
  // CLayout_64x8 = ((4,8,4),(2,2)):((128,1,16),(64,8)), thread t = t0 + 4 t1 +
  // 32 t2, value i = v0 + 2 v1, to the column-major index row + 64 col.
  for (int t = 0; t < wgmma_threads; ++t) {
    for (int i = 0; i < wgmma_d_fragment_size; ++i) {
      const int index = 128 * (t % 4) + (t / 4 % 8) + 16 * (t / 32) + 64 * (i % 2) + 8 * (i / 2);
      const FragmentCoord x = wgmma_d_fragment(t, i);
      CHECK(x.row == index % 64);
      CHECK(x.col == index / 64);
    }
  }
}

TEST_CASE("wgmma: shared-memory operands fill their bytes once and match the descriptor's canonical layout") {
  for (const MmaInstruction& ins : mma_instructions()) {
    if (ins.family != MmaFamily::wgmma) continue;
    CAPTURE(ins.ptx);
    const int bits = ins.input->storage_bits;  // tf32: fp32 words
    CHECK(ins.k() * bits == 8 * wgmma_k_bytes);
    CHECK(ins.m() == wgmma_m);
    for (const int rows : {wgmma_m, wgmma_n}) {  // A, then B (K-major: one row per column n)
      std::vector<int> owners(static_cast<std::size_t>(rows * wgmma_k_bytes), 0);
      for (int r = 0; r < rows; ++r) {
        for (int k = 0; k < ins.k(); ++k) {
          const std::uint32_t at = wgmma_operand_offset(r, k, bits);
          for (int b = 0; b < bits / 8; ++b) {
            REQUIRE(at + b < owners.size());
            ++owners[at + b];
          }
        }
      }
      for (const int o : owners) CHECK(o == 1);
    }
    // The descriptor, decoded field by field (PTX ISA matrix descriptor:
    // address, LBO and SBO in 16-byte units at bits 0, 16 and 32; swizzle
    // mode at bits 62-63), read as the K-major no-swizzle canonical layout
    // ((8,m),2):((1,SBO),LBO) in 16-byte units, reaches each element where
    // the kernel stores it.
    const std::uint32_t start = 0x1A80;
    const std::uint64_t desc = wgmma_descriptor(start);
    CHECK((desc >> 62) == 0);
    CHECK(((desc >> 49) & 7) == 0);
    const std::uint64_t address = (desc & 0x3FFF) << 4, lbo = ((desc >> 16) & 0x3FFF) << 4,
                        sbo = ((desc >> 32) & 0x3FFF) << 4;
    CHECK(address == start);
    for (int r = 0; r < wgmma_m; ++r) {
      for (int k = 0; k < ins.k(); ++k) {
        const int byte = k * bits / 8;
        const std::uint64_t canonical = address + 16 * (r % 8) + sbo * (r / 8) + lbo * (byte / 16) + byte % 16;
        CHECK(canonical == start + wgmma_operand_offset(r, k, bits));
      }
    }
  }
}

TEST_CASE("wgmma descriptor bits (worked by hand)") {
  // 0x400 >> 4 = 0x40; LBO 128 >> 4 = 8 at bit 16; SBO 256 >> 4 = 16 at bit 32.
  CHECK(wgmma_descriptor(0x400) == 0x0000001000080040ull);
}

TEST_CASE("launch geometry") {
  const LaunchConfig one = elementwise_launch(1);
  CHECK(one.blocks == 1);
  CHECK(one.threads_per_block == 256);
  CHECK(elementwise_launch(256).blocks == 1);
  CHECK(elementwise_launch(257).blocks == 2);
  CHECK(elementwise_launch(max_elements_per_launch).blocks == (1u << 26) / 256);
  CHECK_THROWS_AS(elementwise_launch(0), std::invalid_argument);
  CHECK_THROWS_AS(elementwise_launch(max_elements_per_launch + 1), std::invalid_argument);
  // One warp per tile, four warps per block.
  CHECK(mma_launch(1).blocks == 1);
  CHECK(mma_launch(1).threads_per_block == 128);
  CHECK(mma_launch(4).blocks == 1);
  CHECK(mma_launch(5).blocks == 2);
  CHECK_THROWS_AS(mma_launch(0), std::invalid_argument);
  // wgmma: one warpgroup per tile, one tile per block.
  CHECK(wgmma_launch(3).blocks == 3);
  CHECK(wgmma_launch(3).threads_per_block == 128);
  CHECK_THROWS_AS(wgmma_launch(0), std::invalid_argument);
}
