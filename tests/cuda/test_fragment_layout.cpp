// Fragment layouts and launch geometry: every element of A, B and C is held
// by exactly one (lane, slot), and launches cover their work exactly.
#include <doctest/doctest.h>

#include <stdexcept>

#include <map>
#include <utility>

#include "fmtcheck/cuda/fragment_layout.hpp"
#include "fmtcheck/cuda/launch.hpp"
#include "fmtcheck/cuda/mma.hpp"

using namespace fmtcheck::cuda;

namespace {

// Holders of each (row, col): must be exactly rows×cols cells, each once.
template <class Coord>
void check_covers(int rows, int cols, int slots, Coord coord) {
  std::map<std::pair<int, int>, int> holders;
  for (int lane = 0; lane < 32; ++lane) {
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
}
