// wgmma (sm_90a) via inline PTX: one warpgroup computes one m64n8kK tile
// D = A·B + C, A and B read from shared memory through matrix descriptors
// (wgmma_layout.hpp), C loaded into the accumulator registers first (the
// instruction's scale-d predicate is true, so D = A·B + D).
//
// wgmma exists only in the sm_90a code of the fat binary
// (__CUDA_ARCH_FEAT_SM90_ALL); the sm_80 and sm_89 code traps, and the host
// checks the compute capability before it launches.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include "cuda_check.hpp"
#include "fmtcheck/cuda/wgmma_layout.hpp"
#include "kernel_ops.hpp"

namespace fmtcheck::cuda::detail {
namespace {

struct WgmmaTraits {
  int input_bits;  // 8, 16 or 32 (tf32 in fp32 words)
  bool fp16_out;
};

__host__ __device__ constexpr WgmmaTraits traits(WgmmaOp op) {
  switch (op) {
    case WgmmaOp::f16_f32: return {16, false};
    case WgmmaOp::f16_f16: return {16, true};
    case WgmmaOp::bf16_f32: return {16, false};
    case WgmmaOp::tf32_f32: return {32, false};
    case WgmmaOp::e4m3_f32: return {8, false};
    case WgmmaOp::e4m3_f16: return {8, true};
    case WgmmaOp::e5m2_f32: return {8, false};
    case WgmmaOp::e5m2_f16: return {8, true};
  }
  return {};
}

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// Keeps the compiler from moving accumulator reads or writes across the
// asynchronous wgmma (CUTLASS's warpgroup_fence_operand).
__device__ void fence_accumulators(std::uint32_t (&d)[4]) {
  for (int i = 0; i < 4; ++i) asm volatile("" : "+r"(d[i])::"memory");
}

#endif

// One wgmma, issued and waited for: d = A·B + d. d: fp32 output in d[0..3];
// fp16 output as two f16x2 words in d[0], d[1]. fp16 and bf16 take two more
// immediates (no transpose: both K-major).
template <WgmmaOp Op>
__device__ void wgmma(std::uint64_t desc_a, std::uint64_t desc_b, std::uint32_t (&d)[4]) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  fence_accumulators(d);
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#define FMTCHECK_WGMMA_F32(PTX, TAIL)                                                          \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\n" PTX " {%0,%1,%2,%3}, %4, %5, p, 1, 1" TAIL \
               ";\n}\n"                                                                        \
               : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])                                \
               : "l"(desc_a), "l"(desc_b), "r"(1))
#define FMTCHECK_WGMMA_F16(PTX, TAIL)                                                                        \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n" PTX " {%0,%1}, %2, %3, p, 1, 1" TAIL ";\n}\n" \
               : "+r"(d[0]), "+r"(d[1])                                                                      \
               : "l"(desc_a), "l"(desc_b), "r"(1))
  if constexpr (Op == WgmmaOp::f16_f32) FMTCHECK_WGMMA_F32("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16", ", 0, 0");
  if constexpr (Op == WgmmaOp::f16_f16) FMTCHECK_WGMMA_F16("wgmma.mma_async.sync.aligned.m64n8k16.f16.f16.f16", ", 0, 0");
  if constexpr (Op == WgmmaOp::bf16_f32) FMTCHECK_WGMMA_F32("wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16", ", 0, 0");
  if constexpr (Op == WgmmaOp::tf32_f32) FMTCHECK_WGMMA_F32("wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32", "");
  if constexpr (Op == WgmmaOp::e4m3_f32) FMTCHECK_WGMMA_F32("wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3", "");
  if constexpr (Op == WgmmaOp::e4m3_f16) FMTCHECK_WGMMA_F16("wgmma.mma_async.sync.aligned.m64n8k32.f16.e4m3.e4m3", "");
  if constexpr (Op == WgmmaOp::e5m2_f32) FMTCHECK_WGMMA_F32("wgmma.mma_async.sync.aligned.m64n8k32.f32.e5m2.e5m2", "");
  if constexpr (Op == WgmmaOp::e5m2_f16) FMTCHECK_WGMMA_F16("wgmma.mma_async.sync.aligned.m64n8k32.f16.e5m2.e5m2", "");
#undef FMTCHECK_WGMMA_F32
#undef FMTCHECK_WGMMA_F16
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  fence_accumulators(d);
#else
  (void)desc_a, (void)desc_b, (void)d;
  __trap();
#endif
}

__device__ void store_element(unsigned char* at, std::uint32_t word, int bits) {
  if (bits == 8) *at = static_cast<unsigned char>(word);
  else if (bits == 16) *reinterpret_cast<std::uint16_t*>(at) = static_cast<std::uint16_t>(word);
  else *reinterpret_cast<std::uint32_t*>(at) = word;
}

template <WgmmaOp Op>
__global__ void __launch_bounds__(wgmma_threads) wgmma_tile_kernel(const std::uint32_t* a, const std::uint32_t* b,
                                                                   const std::uint32_t* c, std::uint32_t* d) {
  constexpr WgmmaTraits t = traits(Op);
  constexpr int k = wgmma_k_bytes * 8 / t.input_bits;
  __shared__ __align__(128) unsigned char sa[wgmma_a_bytes];
  __shared__ __align__(128) unsigned char sb[wgmma_b_bytes];
  const std::size_t tile = blockIdx.x;  // one tile per block: the grid holds exactly the tiles
  const int thread = static_cast<int>(threadIdx.x);
  const std::uint32_t* at = a + tile * wgmma_m * k;
  const std::uint32_t* bt = b + tile * wgmma_n * k;  // column n of B: its K values one after another
  const std::uint32_t* ct = c + tile * wgmma_m * wgmma_n;
  for (int i = thread; i < wgmma_m * k; i += wgmma_threads) {
    store_element(sa + wgmma_operand_offset(i / k, i % k, t.input_bits), at[i], t.input_bits);
  }
  for (int i = thread; i < wgmma_n * k; i += wgmma_threads) {
    store_element(sb + wgmma_operand_offset(i / k, i % k, t.input_bits), bt[i], t.input_bits);
  }
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  // The tensor core reads shared memory through the async proxy.
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
  __syncthreads();

  std::uint32_t rd[4] = {};
  for (int i = 0; i < wgmma_d_fragment_size; ++i) {
    const FragmentCoord x = wgmma_d_fragment(thread, i);
    const std::uint32_t v = ct[x.row * wgmma_n + x.col];
    if (t.fp16_out) rd[i / 2] |= (v & 0xFFFF) << (16 * (i % 2)); else rd[i] = v;
  }
  const auto shared_address = [](const void* p) { return static_cast<std::uint32_t>(__cvta_generic_to_shared(p)); };
  const std::uint64_t desc_a = wgmma_descriptor(shared_address(sa));
  const std::uint64_t desc_b = wgmma_descriptor(shared_address(sb));
  wgmma<Op>(desc_a, desc_b, rd);
  for (int i = 0; i < wgmma_d_fragment_size; ++i) {
    const FragmentCoord x = wgmma_d_fragment(thread, i);
    d[tile * wgmma_m * wgmma_n + x.row * wgmma_n + x.col] = t.fp16_out ? (rd[i / 2] >> (16 * (i % 2))) & 0xFFFF : rd[i];
  }
}

template <WgmmaOp Op>
void launch(const std::uint32_t* a, const std::uint32_t* b, const std::uint32_t* c, std::uint32_t* d,
            LaunchConfig cfg) {
  wgmma_tile_kernel<Op><<<cfg.blocks, cfg.threads_per_block>>>(a, b, c, d);
}

}  // namespace

void launch_wgmma(WgmmaOp op, const std::uint32_t* a, const std::uint32_t* b, const std::uint32_t* c,
                  std::uint32_t* d, std::size_t tiles, LaunchConfig cfg) {
  if (cfg.blocks != tiles || cfg.threads_per_block != wgmma_threads) throw std::invalid_argument("launch_wgmma: not wgmma_launch(tiles)");
  switch (op) {
    case WgmmaOp::f16_f32: launch<WgmmaOp::f16_f32>(a, b, c, d, cfg); break;
    case WgmmaOp::f16_f16: launch<WgmmaOp::f16_f16>(a, b, c, d, cfg); break;
    case WgmmaOp::bf16_f32: launch<WgmmaOp::bf16_f32>(a, b, c, d, cfg); break;
    case WgmmaOp::tf32_f32: launch<WgmmaOp::tf32_f32>(a, b, c, d, cfg); break;
    case WgmmaOp::e4m3_f32: launch<WgmmaOp::e4m3_f32>(a, b, c, d, cfg); break;
    case WgmmaOp::e4m3_f16: launch<WgmmaOp::e4m3_f16>(a, b, c, d, cfg); break;
    case WgmmaOp::e5m2_f32: launch<WgmmaOp::e5m2_f32>(a, b, c, d, cfg); break;
    case WgmmaOp::e5m2_f16: launch<WgmmaOp::e5m2_f16>(a, b, c, d, cfg); break;
  }
  check(cudaGetLastError(), "wgmma kernel launch");
}

}  // namespace fmtcheck::cuda::detail
