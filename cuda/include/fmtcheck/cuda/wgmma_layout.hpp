// Where wgmma (sm_90a) finds its operands and leaves its accumulators, for
// the one shape per type the kernels use: m64n8kK with K = 32 bytes of
// elements (k16 for fp16/bf16, k8 for tf32, k32 for e4m3/e5m2).
//
// A (64×K) and B (K×8) are read from shared memory through a 64-bit matrix
// descriptor (PTX ISA, "Matrix Descriptor Format" of wgmma; CUTLASS
// cute/arch/mma_sm90_desc.hpp): start address, leading and stride byte
// offsets (each >> 4), base offset and swizzle mode. Both operands are
// K-major without swizzle, the only layout tf32 and fp8 accept: "core
// matrices" of 8 rows × 16 bytes, each row's 16 bytes contiguous, one core
// matrix 128 contiguous bytes; the two core matrices that hold a row's 32
// bytes of K lie LBO apart, consecutive groups of 8 rows SBO apart. In
// uint128 units that is CUTLASS's canonical ((8,m),2):((1,SBO),LBO).
//
// D is held by the 128 threads of the warpgroup: warp w holds rows 16w to
// 16w+15 exactly as mma.sync holds its 16×8 C (CUTLASS CLayout_64x8).
// The host tests check that both maps are one-to-one.
#pragma once

#include <cstdint>

#include "fmtcheck/cuda/fragment_layout.hpp"

namespace fmtcheck::cuda {

inline constexpr int wgmma_m = 64;
inline constexpr int wgmma_n = 8;
inline constexpr int wgmma_threads = 128;  // one warpgroup
inline constexpr int wgmma_k_bytes = 32;   // every type: two core matrices along K
// The two K halves of a row group are adjacent; row groups follow each other.
inline constexpr std::uint32_t wgmma_lbo_bytes = 128;
inline constexpr std::uint32_t wgmma_sbo_bytes = 256;
// Shared-memory bytes of A and B.
inline constexpr int wgmma_a_bytes = wgmma_m * wgmma_k_bytes;
inline constexpr int wgmma_b_bytes = wgmma_n * wgmma_k_bytes;

// Byte offset of element (row, k) of a K-major operand whose elements are
// element_bits wide (row: m of A or n of B).
FMTCHECK_HOST_DEVICE constexpr std::uint32_t wgmma_operand_offset(int row, int k, int element_bits) {
  const int byte = k * element_bits / 8;  // within the row's 32 bytes
  return static_cast<std::uint32_t>(row / 8) * wgmma_sbo_bytes + static_cast<std::uint32_t>(byte / 16) * wgmma_lbo_bytes +
         static_cast<std::uint32_t>(row % 8) * 16 + static_cast<std::uint32_t>(byte % 16);
}

// The descriptor of an operand at shared-memory address `address` (16-byte
// aligned, below 256 KiB): bits 0-13 address >> 4, 16-29 LBO >> 4, 32-45
// SBO >> 4, 49-51 base offset 0, 62-63 swizzle mode 0 (none).
FMTCHECK_HOST_DEVICE constexpr std::uint64_t wgmma_descriptor(std::uint32_t address) {
  return (std::uint64_t{(address >> 4) & 0x3FFF}) | (std::uint64_t{(wgmma_lbo_bytes >> 4) & 0x3FFF} << 16) |
         (std::uint64_t{(wgmma_sbo_bytes >> 4) & 0x3FFF} << 32);
}

// D elements per thread: 4 (fp32: 4 registers; fp16: 2 registers of two).
inline constexpr int wgmma_d_fragment_size = 4;

// (row, n) of D element i (0..3) held by thread t (0..127) of the warpgroup.
FMTCHECK_HOST_DEVICE constexpr FragmentCoord wgmma_d_fragment(int thread, int i) {
  const FragmentCoord in_warp = c_fragment(thread % 32, i);
  return {16 * (thread / 32) + in_warp.row, in_warp.col};
}

}  // namespace fmtcheck::cuda
