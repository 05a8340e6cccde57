// fused_vector.hpp's kernel. GemmKernel::fused_block walks a block's products
// one by one, twice: for the largest exponent, then for the truncated sum.
// Here both walks take a vector of products at a time, in 32-bit lanes
// (16 with AVX-512): the exponents' maximum and the terms' sum are lane
// reductions, each term the scalar one, (|a*b| << G) >> min(e_max - e, 31).
// C's decode and term, and the rounding, are GemmKernel's own (fused_finish).
// A block waits on the one before it (its C), so several columns go side by
// side, their chains independent, sharing the row's loads.
//
// Highway compiles this file once per x86-64 level (foreach_target.h) and
// HWY_DYNAMIC_DISPATCH picks the best one the CPU has.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tensor_core/fused_vector.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "tensor_core/fused_vector.hpp"

HWY_BEFORE_NAMESPACE();
namespace fmtcheck::detail {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// At most 16 lanes: 16 terms below 2^27 sum below 2^31.
using Tag = hn::CappedTag<std::int32_t, 16>;

// One fused block over k in [k0, k1) for C columns: the products whose lane
// (k - k0) mod 4 lies in [first, first + lanes) (lanes 4: all), added to
// c_bits[col], the result written back: what GemmKernel::fused_block<lanes>
// returns, column by column.
template <int C>
void Blocks(const GemmKernel& kernel, const FusedLines& x, std::size_t k0, std::size_t k1, int first, int lanes,
            std::uint32_t* c_bits) {
  const Tag d;
  const hn::RebindToUnsigned<Tag> du;
  const std::size_t n = hn::Lanes(d);
  Operand c[C];
  bool special[C];
  for (int col = 0; col < C; ++col) c[col] = decode_operand(kernel.accumulator, c_bits[col], special[col]);
  // The products this block takes among the n from k. (Highway's Iota
  // goes through memory: it is built once.)
  const auto lane = hn::Iota(d, 0);
  const auto taken = [&](std::size_t k) {
    const auto present = hn::FirstN(d, k1 - k);
    if (lanes == 4) return present;
    const auto position = hn::And(hn::Add(lane, hn::Set(d, static_cast<std::int32_t>(k - k0))), hn::Set(d, 3));
    const auto in_group = hn::And(hn::Gt(position, hn::Set(d, first - 1)), hn::Lt(position, hn::Set(d, first + lanes)));
    return hn::And(in_group, present);
  };
  const auto lowest = hn::Set(d, zero_align);
  hn::Vec<Tag> e_max_lanes[C];
  for (int col = 0; col < C; ++col) e_max_lanes[col] = hn::Set(d, c[col].align);
  for (std::size_t k = k0; k < k1; k += n) {
    const auto m = taken(k);
    const auto a_align = hn::MaskedLoad(m, d, x.a_align + k);
    for (int col = 0; col < C; ++col) {
      const auto e = hn::Add(a_align, hn::MaskedLoad(m, d, x.b_align[col] + k));
      e_max_lanes[col] = hn::Max(e_max_lanes[col], hn::IfThenElse(m, e, lowest));
    }
  }
  std::int32_t e_max[C];
  std::int64_t products[C] = {};
  for (int col = 0; col < C; ++col) e_max[col] = hn::GetLane(hn::MaxOfLanes(d, e_max_lanes[col]));
  for (std::size_t k = k0; k < k1; k += n) {
    const auto m = taken(k);
    // Lanes not taken load zero significands: their terms are zero.
    const auto a_sig = hn::MaskedLoad(m, d, x.a_sig + k), a_align = hn::MaskedLoad(m, d, x.a_align + k);
    for (int col = 0; col < C; ++col) {
      const auto p = hn::Mul(a_sig, hn::MaskedLoad(m, d, x.b_sig[col] + k));
      const auto e = hn::Add(a_align, hn::MaskedLoad(m, d, x.b_align[col] + k));
      // e_max - e of a lane not taken is large but no overflow: e >= 2 * zero_align.
      const auto gap = hn::Min(hn::Sub(hn::Set(d, e_max[col]), e), hn::Set(d, 31));
      const auto magnitude = hn::ShiftLeftSame(hn::BitCast(du, hn::Abs(p)), kernel.shift_up);
      const auto t = hn::BitCast(d, hn::Shr(magnitude, hn::BitCast(du, gap)));  // truncation toward zero
      const auto term = hn::IfThenElse(hn::Lt(p, hn::Zero(d)), hn::Neg(t), t);
      products[col] += hn::GetLane(hn::SumOfLanes(d, term));
    }
  }
  for (int col = 0; col < C; ++col) {
    // An infinite C decides its block (the products are finite); no term
    // at all gives +0.
    if (special[col]) continue;
    c_bits[col] = e_max[col] < zero_align / 2 ? 0 : kernel.fused_finish(c[col], e_max[col], products[col]);
  }
}

template <int C>
void Chunks(const GemmKernel& kernel, const FusedLines& x, std::size_t len, std::uint32_t* out) {
  for (int col = 0; col < C; ++col) out[col] = 0;  // +0
  for (std::size_t k0 = 0; k0 < len; k0 += kernel.block) {
    const std::size_t k1 = len < k0 + kernel.block ? len : k0 + kernel.block;
    if (kernel.structure == DotStructure::fused) {
      Blocks<C>(kernel, x, k0, k1, 0, 4, out);
    } else {  // fp16_groups, as GemmKernel::chunk
      std::uint32_t groups[C] = {};
      Blocks<C>(kernel, x, k0, k1, 0, 2, groups);
      Blocks<C>(kernel, x, k0, k1, 2, 2, groups);
      for (int col = 0; col < C; ++col) out[col] = add_two_nearest(groups[col], out[col], kernel.accumulator);
    }
  }
}

void FusedChunks(const GemmKernel& kernel, const FusedLines& x, std::size_t columns, std::size_t len,
                 std::uint32_t* out) {
  static_assert(fused_vector_columns == 4);
  switch (columns) {
    case 1: Chunks<1>(kernel, x, len, out); break;
    case 2: Chunks<2>(kernel, x, len, out); break;
    case 3: Chunks<3>(kernel, x, len, out); break;
    default: Chunks<4>(kernel, x, len, out); break;
  }
}

std::size_t Lanes() { return hn::Lanes(Tag()); }

}  // namespace HWY_NAMESPACE
}  // namespace fmtcheck::detail
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace fmtcheck::detail {

HWY_EXPORT(FusedChunks);
HWY_EXPORT(Lanes);

bool fused_vector_covers(const GemmKernel& kernel) {
  const bool fused = kernel.structure == DotStructure::fused && kernel.model.fraction_bits != DotModel::exact_alignment;
  return (fused || kernel.structure == DotStructure::fp16_groups) && kernel.shift_up >= 0 &&
         kernel.model.fraction_bits <= 25;
}

void fused_chunks_vector(const GemmKernel& kernel, const FusedLines& lines, std::size_t columns, std::size_t len,
                         std::uint32_t* out) {
  HWY_DYNAMIC_DISPATCH(FusedChunks)(kernel, lines, columns, len, out);
}

std::size_t fused_vector_lanes() { return HWY_DYNAMIC_DISPATCH(Lanes)(); }

}  // namespace fmtcheck::detail
#endif  // HWY_ONCE
