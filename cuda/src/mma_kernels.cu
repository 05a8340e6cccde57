// One warp computes one tile D = A·B + C with one mma.sync instruction.
// Each lane gathers its fragment elements (fragment_layout.hpp) from the
// tile arrays, packs them into registers and scatters D back.
#include <cuda_runtime.h>

#include <stdexcept>

#include "cuda_check.hpp"
#include "fmtcheck/cuda/fragment_layout.hpp"
#include "kernel_ops.hpp"

namespace fmtcheck::cuda::detail {
namespace {

struct OpTraits {
  MmaShape shape;
  int input_bits;  // 8, 16 or 32 (tf32 in fp32 registers)
  bool fp16_out;
};

__host__ __device__ constexpr OpTraits traits(MmaOp op) {
  switch (op) {
    case MmaOp::f16_f32: return {MmaShape::m16n8k16, 16, false};
    case MmaOp::f16_f16: return {MmaShape::m16n8k16, 16, true};
    case MmaOp::bf16_f32: return {MmaShape::m16n8k16, 16, false};
    case MmaOp::tf32_f32: return {MmaShape::m16n8k8, 32, false};
    case MmaOp::e4m3_f32: return {MmaShape::m16n8k32, 8, false};
    case MmaOp::e4m3_f16: return {MmaShape::m16n8k32, 8, true};
    case MmaOp::e5m2_f32: return {MmaShape::m16n8k32, 8, false};
    case MmaOp::e5m2_f16: return {MmaShape::m16n8k32, 8, true};
  }
  return {};
}

__host__ __device__ constexpr int k_of(MmaShape s) { return s == MmaShape::m16n8k8 ? 8 : s == MmaShape::m16n8k16 ? 16 : 32; }

// d[4] (fp32 bits; fp16 output: two f16x2 words in d[0], d[1]).
template <MmaOp Op>
__device__ void mma(const std::uint32_t (&a)[4], const std::uint32_t (&b)[2], const std::uint32_t (&c)[4],
                    std::uint32_t (&d)[4]) {
#define FMTCHECK_MMA_F32(PTX)                                                                              \
  asm volatile(PTX " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"                           \
               : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])                                          \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]), \
                 "r"(c[2]), "r"(c[3]))
#define FMTCHECK_MMA_F16(PTX)                                                       \
  asm volatile(PTX " {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%8,%9};"                    \
               : "=r"(d[0]), "=r"(d[1])                                           \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), \
                 "r"(c[0]), "r"(c[1]))
  if constexpr (Op == MmaOp::f16_f32) FMTCHECK_MMA_F32("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32");
  if constexpr (Op == MmaOp::f16_f16) FMTCHECK_MMA_F16("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16");
  if constexpr (Op == MmaOp::bf16_f32) FMTCHECK_MMA_F32("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32");
  if constexpr (Op == MmaOp::tf32_f32) FMTCHECK_MMA_F32("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32");
#if __CUDA_ARCH__ >= 890
  if constexpr (Op == MmaOp::e4m3_f32) FMTCHECK_MMA_F32("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32");
  if constexpr (Op == MmaOp::e4m3_f16) FMTCHECK_MMA_F16("mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16");
  if constexpr (Op == MmaOp::e5m2_f32) FMTCHECK_MMA_F32("mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32");
  if constexpr (Op == MmaOp::e5m2_f16) FMTCHECK_MMA_F16("mma.sync.aligned.m16n8k32.row.col.f16.e5m2.e5m2.f16");
#else
  if constexpr (traits(Op).shape == MmaShape::m16n8k32) __trap();  // the host checks the capability first
#endif
#undef FMTCHECK_MMA_F32
#undef FMTCHECK_MMA_F16
}

template <MmaOp Op>
__global__ void mma_tile_kernel(const std::uint32_t* a, const std::uint32_t* b, const std::uint32_t* c,
                                std::uint32_t* d, std::size_t tiles) {
  constexpr OpTraits t = traits(Op);
  constexpr int k = k_of(t.shape);
  constexpr int per_word = 32 / t.input_bits;
  constexpr std::uint32_t mask = t.input_bits == 32 ? 0xFFFFFFFFu : (1u << t.input_bits) - 1;
  const std::size_t tile = blockIdx.x * static_cast<std::size_t>(mma_warps_per_block) + threadIdx.x / warp_size;
  if (tile >= tiles) return;  // a whole warp leaves together: mma.sync needs all 32 lanes
  const int lane = static_cast<int>(threadIdx.x % warp_size);
  const std::uint32_t* at = a + tile * 16 * k;
  const std::uint32_t* bt = b + tile * 8 * k;
  const std::uint32_t* ct = c + tile * 128;
  std::uint32_t ra[4] = {}, rb[2] = {}, rc[4] = {}, rd[4] = {};
  for (int i = 0; i < a_fragment_size(t.shape); ++i) {
    const FragmentCoord x = a_fragment(t.shape, lane, i);
    ra[i / per_word] |= (at[x.row * k + x.col] & mask) << ((i % per_word) * t.input_bits);
  }
  for (int i = 0; i < b_fragment_size(t.shape); ++i) {
    const FragmentCoord x = b_fragment(t.shape, lane, i);  // (k, n); B is stored column after column
    rb[i / per_word] |= (bt[x.col * k + x.row] & mask) << ((i % per_word) * t.input_bits);
  }
  for (int i = 0; i < c_fragment_size; ++i) {
    const FragmentCoord x = c_fragment(lane, i);
    const std::uint32_t v = ct[x.row * 8 + x.col];
    if (t.fp16_out) rc[i / 2] |= (v & 0xFFFF) << (16 * (i % 2)); else rc[i] = v;
  }
  mma<Op>(ra, rb, rc, rd);
  for (int i = 0; i < c_fragment_size; ++i) {
    const FragmentCoord x = c_fragment(lane, i);
    d[tile * 128 + x.row * 8 + x.col] = t.fp16_out ? (rd[i / 2] >> (16 * (i % 2))) & 0xFFFF : rd[i];
  }
}

template <MmaOp Op>
void launch(const std::uint32_t* a, const std::uint32_t* b, const std::uint32_t* c, std::uint32_t* d,
            std::size_t tiles, LaunchConfig cfg) {
  mma_tile_kernel<Op><<<cfg.blocks, cfg.threads_per_block>>>(a, b, c, d, tiles);
}

// A GEMM as a chain of mma.sync tiles (hw train): one warp per 16×8 block of
// D, K taken one instruction's k (16 for fp16/bf16, 8 for tf32) at a time
// in order, each instruction's D the next one's C, starting from +0. A is
// M×K row-major, B is N×K (column n of B, K-major), D is M×N row-major fp32;
// all dimensions are multiples of the tile (the host pads). tf32 operands
// are whole fp32 registers: the tensor core reads their top 19 bits.
template <MmaOp Op>
__global__ void tile_gemm_kernel(const std::uint32_t* a, const std::uint32_t* b, std::uint32_t* d, int m, int n,
                                 int k) {
  constexpr OpTraits t = traits(Op);
  static_assert(t.input_bits >= 16 && !t.fp16_out, "fp16, bf16 or tf32 into fp32 only");
  constexpr int step = k_of(t.shape);
  constexpr int per_word = 32 / t.input_bits;
  constexpr std::uint32_t mask = t.input_bits == 32 ? 0xFFFFFFFFu : 0xFFFFu;
  const int warp = static_cast<int>(blockIdx.x * mma_warps_per_block + threadIdx.x / warp_size);
  const int tiles_n = n / 8;
  if (warp >= (m / 16) * tiles_n) return;  // a whole warp leaves together
  const int lane = static_cast<int>(threadIdx.x % warp_size);
  const int row0 = warp / tiles_n * 16, col0 = warp % tiles_n * 8;
  std::uint32_t acc[4] = {};
  for (int k0 = 0; k0 < k; k0 += step) {
    std::uint32_t ra[4] = {}, rb[2] = {}, rd[4] = {};
    for (int i = 0; i < a_fragment_size(t.shape); ++i) {
      const FragmentCoord x = a_fragment(t.shape, lane, i);
      ra[i / per_word] |= (a[(row0 + x.row) * k + k0 + x.col] & mask) << ((i % per_word) * t.input_bits);
    }
    for (int i = 0; i < b_fragment_size(t.shape); ++i) {
      const FragmentCoord x = b_fragment(t.shape, lane, i);  // (k, n)
      rb[i / per_word] |= (b[(col0 + x.col) * k + k0 + x.row] & mask) << ((i % per_word) * t.input_bits);
    }
    mma<Op>(ra, rb, acc, rd);
    for (int i = 0; i < 4; ++i) acc[i] = rd[i];
  }
  for (int i = 0; i < c_fragment_size; ++i) {
    const FragmentCoord x = c_fragment(lane, i);
    d[(row0 + x.row) * n + col0 + x.col] = acc[i];
  }
}

}  // namespace

void launch_tile_gemm(MmaOp op, const std::uint32_t* a, const std::uint32_t* b, std::uint32_t* d, int m, int n, int k,
                      LaunchConfig cfg) {
  if (op == MmaOp::f16_f32) {
    tile_gemm_kernel<MmaOp::f16_f32><<<cfg.blocks, cfg.threads_per_block>>>(a, b, d, m, n, k);
  } else if (op == MmaOp::bf16_f32) {
    tile_gemm_kernel<MmaOp::bf16_f32><<<cfg.blocks, cfg.threads_per_block>>>(a, b, d, m, n, k);
  } else if (op == MmaOp::tf32_f32) {
    tile_gemm_kernel<MmaOp::tf32_f32><<<cfg.blocks, cfg.threads_per_block>>>(a, b, d, m, n, k);
  } else {
    throw std::invalid_argument("launch_tile_gemm: fp16, bf16 or tf32 into fp32 only");
  }
  check(cudaGetLastError(), "tile GEMM kernel launch");
}

void launch_mma(MmaOp op, const std::uint32_t* a, const std::uint32_t* b, const std::uint32_t* c, std::uint32_t* d,
                std::size_t tiles, LaunchConfig cfg) {
  switch (op) {
    case MmaOp::f16_f32: launch<MmaOp::f16_f32>(a, b, c, d, tiles, cfg); break;
    case MmaOp::f16_f16: launch<MmaOp::f16_f16>(a, b, c, d, tiles, cfg); break;
    case MmaOp::bf16_f32: launch<MmaOp::bf16_f32>(a, b, c, d, tiles, cfg); break;
    case MmaOp::tf32_f32: launch<MmaOp::tf32_f32>(a, b, c, d, tiles, cfg); break;
    case MmaOp::e4m3_f32: launch<MmaOp::e4m3_f32>(a, b, c, d, tiles, cfg); break;
    case MmaOp::e4m3_f16: launch<MmaOp::e4m3_f16>(a, b, c, d, tiles, cfg); break;
    case MmaOp::e5m2_f32: launch<MmaOp::e5m2_f32>(a, b, c, d, tiles, cfg); break;
    case MmaOp::e5m2_f16: launch<MmaOp::e5m2_f16>(a, b, c, d, tiles, cfg); break;
  }
  check(cudaGetLastError(), "mma kernel launch");
}

}  // namespace fmtcheck::cuda::detail
