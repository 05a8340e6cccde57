#include "fmtcheck/cuda/launch.hpp"

#include <limits>
#include <stdexcept>
#include <string>

namespace fmtcheck::cuda {

LaunchConfig elementwise_launch(std::size_t elements) {
  if (elements == 0 || elements > max_elements_per_launch) {
    throw std::invalid_argument("element-wise launch: " + std::to_string(elements) +
                                " elements (1 to 2^26 per launch)");
  }
  return {static_cast<std::uint32_t>((elements + elementwise_threads - 1) / elementwise_threads), elementwise_threads};
}

namespace {

// gridDim.x may reach 2^31 - 1 blocks.
void check_tile_count(std::size_t tiles, std::size_t tiles_per_block, const char* what) {
  constexpr auto max_blocks = std::size_t{std::numeric_limits<std::int32_t>::max()};
  if (tiles == 0 || tiles > max_blocks * tiles_per_block) {
    throw std::invalid_argument(std::string(what) + " launch: " + std::to_string(tiles) + " tiles");
  }
}

}  // namespace

LaunchConfig mma_launch(std::size_t tiles) {
  check_tile_count(tiles, mma_warps_per_block, "mma");
  return {static_cast<std::uint32_t>((tiles + mma_warps_per_block - 1) / mma_warps_per_block),
          mma_warps_per_block * warp_size};
}

LaunchConfig wgmma_launch(std::size_t tiles) {
  check_tile_count(tiles, 1, "wgmma");
  return {static_cast<std::uint32_t>(tiles), 4 * warp_size};
}

}  // namespace fmtcheck::cuda
