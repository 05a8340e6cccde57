// Launch geometry of the kernels, a pure function of the problem size so it
// is tested without a device.
#pragma once

#include <cstddef>
#include <cstdint>

namespace fmtcheck::cuda {

struct LaunchConfig {
  std::uint32_t blocks = 0;
  std::uint32_t threads_per_block = 0;
};

// Element-wise kernels: one thread per element.
inline constexpr std::uint32_t elementwise_threads = 256;
// MMA kernels: one warp per tile, a few warps per block.
inline constexpr std::uint32_t warp_size = 32;
inline constexpr std::uint32_t mma_warps_per_block = 4;
// The largest element count one element-wise launch takes (callers chunk).
inline constexpr std::size_t max_elements_per_launch = std::size_t{1} << 26;

// Throws std::invalid_argument for 0 or more than max_elements_per_launch.
LaunchConfig elementwise_launch(std::size_t elements);
// Throws std::invalid_argument for 0 tiles or more than a grid holds.
LaunchConfig mma_launch(std::size_t tiles);
// wgmma: one warpgroup (128 threads) per tile, one tile per block; the same
// errors.
LaunchConfig wgmma_launch(std::size_t tiles);

}  // namespace fmtcheck::cuda
