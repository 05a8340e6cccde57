// Which matrix element each lane of a warp holds in each register of an
// mma.sync fragment (PTX ISA, "Matrix fragments for mma.m16n8k8 / k16 / k32").
// The kernels use these to load and store fragments; the host tests check
// that every element of A, B and C is held by exactly one (lane, slot).
#pragma once


#ifdef __CUDACC__
#define FMTCHECK_HOST_DEVICE __host__ __device__
#else
#define FMTCHECK_HOST_DEVICE
#endif

namespace fmtcheck::cuda {

enum class MmaShape : unsigned char { m16n8k8, m16n8k16, m16n8k32 };

struct FragmentCoord {
  int row = 0;
  int col = 0;
};

// Elements of A (16×K) and B (K×8) each lane holds: 4 registers of A and 2
// of B for every shape, packed 32 / element-bits to a register, the lowest
// index in the lowest bits.
FMTCHECK_HOST_DEVICE constexpr int a_fragment_size(MmaShape s) {
  return s == MmaShape::m16n8k8 ? 4 : s == MmaShape::m16n8k16 ? 8 : 16;
}
FMTCHECK_HOST_DEVICE constexpr int b_fragment_size(MmaShape s) { return a_fragment_size(s) / 2; }
// C and D: 4 elements per lane (fp32: 4 registers; fp16: 2 registers of two).
inline constexpr int c_fragment_size = 4;

// (row, k) of A element i held by `lane`.
FMTCHECK_HOST_DEVICE constexpr FragmentCoord a_fragment(MmaShape s, int lane, int i) {
  const int group = lane >> 2, thread = lane & 3;
  switch (s) {
    case MmaShape::m16n8k8:  // tf32: a0 a2 in row g, a1 a3 in row g+8; a2 a3 four columns on
      return {group + 8 * (i & 1), thread + 4 * (i >> 1)};
    case MmaShape::m16n8k16:  // 16-bit: pairs a0a1 (g), a2a3 (g+8), a4a5 (g, +8 cols), a6a7 (g+8, +8 cols)
      return {group + 8 * ((i >> 1) & 1), thread * 2 + (i & 1) + 8 * (i >> 2)};
    case MmaShape::m16n8k32:  // 8-bit: quads a0-a3 (g), a4-a7 (g+8), a8-a11 (g, +16 cols), a12-a15 (g+8, +16)
      return {group + 8 * ((i >> 2) & 1), thread * 4 + (i & 3) + 16 * (i >> 3)};
  }
  return {};
}

// (k, n) of B element i held by `lane`.
FMTCHECK_HOST_DEVICE constexpr FragmentCoord b_fragment(MmaShape s, int lane, int i) {
  const int group = lane >> 2, thread = lane & 3;
  switch (s) {
    case MmaShape::m16n8k8: return {thread + 4 * i, group};
    case MmaShape::m16n8k16: return {thread * 2 + (i & 1) + 8 * (i >> 1), group};
    case MmaShape::m16n8k32: return {thread * 4 + (i & 3) + 16 * (i >> 2), group};
  }
  return {};
}

// (row, n) of C/D element i (0..3) held by `lane`, for every shape.
FMTCHECK_HOST_DEVICE constexpr FragmentCoord c_fragment(int lane, int i) {
  return {(lane >> 2) + 8 * (i >> 1), (lane & 3) * 2 + (i & 1)};
}

}  // namespace fmtcheck::cuda
