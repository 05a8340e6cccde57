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

LaunchConfig mma_launch(std::size_t tiles) {
  // gridDim.x may reach 2^31 - 1 blocks.
  constexpr std::size_t max_tiles = std::size_t{std::numeric_limits<std::int32_t>::max()} * mma_warps_per_block;
  if (tiles == 0 || tiles > max_tiles) throw std::invalid_argument("mma launch: " + std::to_string(tiles) + " tiles");
  return {static_cast<std::uint32_t>((tiles + mma_warps_per_block - 1) / mma_warps_per_block),
          mma_warps_per_block * warp_size};
}

}  // namespace fmtcheck::cuda
