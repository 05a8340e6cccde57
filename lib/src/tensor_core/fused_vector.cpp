// fused_vector.hpp's kernel. GemmKernel::fused_block walks a block's products
// one by one, twice: for the largest exponent, then for the truncated sum.
// Here both walks take a vector of products at a time, in 32-bit lanes
// (16 with AVX-512): the exponents' maximum and the terms' sum are lane
// reductions, each term the scalar one, (|a*b| << G) >> min(e_max - e, 31).
// C's decode and term, and the rounding, are GemmKernel's own (fused_finish).
// Block-scaled instructions whose scaled products are each a term, scaled
// by powers of two (kind::mxf8f6f4 with E8M0), are such blocks too, each
// product's exponent moved by its scales, and end in
// BlockScaledKernel::finish.
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

// At most 16 lanes (fused_vector_padding): 16 terms below 2^27 sum below
// 2^31. Loads take whole vectors (Highway's masked loads read whole vectors
// below AVX2 anyway), from arrays padded past their last line.
using Tag = hn::CappedTag<std::int32_t, fused_vector_padding>;
// Blocks of at most 8 or 4 products (tf32's on Hopper and on Ampere) take
// that many lanes: a 16-lane vector would leave the rest idle and reduce
// over all 16.
using HalfTag = hn::CappedTag<std::int32_t, 8>;
using QuarterTag = hn::CappedTag<std::int32_t, 4>;

// The lanes among the n from k that a block takes: those before k1 and,
// for FP8 mma.sync's fp16 groups, those whose (k - k0) mod 4 lies in
// [first, first + lanes) (lanes 4: all).
template <class D>
struct Taken {
  std::size_t k0, k1;
  int first, lanes;
  hn::Vec<D> lane;  // 0, 1, 2, ... (Highway's Iota goes through memory: built once a call)

  [[nodiscard]] hn::Mask<D> operator()(std::size_t k) const {
    const D d;
    const auto present = hn::FirstN(d, k1 - k);
    if (lanes == 4) return present;
    const auto position = hn::And(hn::Add(lane, hn::Set(d, static_cast<std::int32_t>(k - k0))), hn::Set(d, 3));
    const auto in_group = hn::And(hn::Gt(position, hn::Set(d, first - 1)), hn::Lt(position, hn::Set(d, first + lanes)));
    return hn::And(in_group, present);
  }
};

// Folds the exponents of the products of [k0, k1) that `taken` takes into
// each column's running maximum, lane by lane; column col's products are
// aligned offset[col] higher (their scales' exponents).
template <int C, class D>
void MaxExponents(const FusedLines& x, std::size_t k0, std::size_t k1, const Taken<D>& taken,
                  const std::int32_t* offset, hn::Vec<D>* e_max_lanes) {
  const D d;
  const auto lowest = hn::Set(d, zero_align);
  for (std::size_t k = k0; k < k1; k += hn::Lanes(d)) {
    const auto m = taken(k);
    const auto a_align = hn::LoadU(d, x.a_align + k);
    for (int col = 0; col < C; ++col) {
      const auto e = hn::Add(hn::Add(a_align, hn::LoadU(d, x.b_align[col] + k)), hn::Set(d, offset[col]));
      e_max_lanes[col] = hn::Max(e_max_lanes[col], hn::IfThenElse(m, e, lowest));
    }
  }
}

// Adds to products[col] the terms of the products of [k0, k1) that `taken`
// takes, each the scalar kernels' (|a*b| << G) >> (e_max[col] - e) with its
// sign, e the product's exponent plus offset[col].
template <int C, class D>
void AddTerms(const FusedLines& x, std::size_t k0, std::size_t k1, const Taken<D>& taken, int shift_up,
              const std::int32_t* offset, const std::int32_t* e_max, std::int64_t* products) {
  const D d;
  const hn::RebindToUnsigned<D> du;
  for (std::size_t k = k0; k < k1; k += hn::Lanes(d)) {
    const auto m = taken(k);
    // Lanes not taken get a zero significand from A: their terms are zero
    // whatever their exponents (another block's, or the padding's).
    const auto a_sig = hn::IfThenElseZero(m, hn::LoadU(d, x.a_sig + k)), a_align = hn::LoadU(d, x.a_align + k);
    for (int col = 0; col < C; ++col) {
      const auto p = hn::Mul(a_sig, hn::LoadU(d, x.b_sig[col] + k));
      const auto e = hn::Add(hn::Add(a_align, hn::LoadU(d, x.b_align[col] + k)), hn::Set(d, offset[col]));
      // e_max - e is at least 0 in the lanes taken, and past 26 every term
      // is 0; clamped to [0, 31] for the lanes not taken too (their zero
      // terms shifted by a count the emulated targets can shift by).
      // Exponents lie within a few hundred of 0 or at 2 * zero_align: no
      // lane overflows.
      const auto gap = hn::Min(hn::Max(hn::Sub(hn::Set(d, e_max[col]), e), hn::Zero(d)), hn::Set(d, 31));
      const auto magnitude = hn::ShiftLeftSame(hn::BitCast(du, hn::Abs(p)), shift_up);
      const auto t = hn::BitCast(d, hn::Shr(magnitude, hn::BitCast(du, gap)));  // truncation toward zero
      const auto term = hn::IfThenElse(hn::Lt(p, hn::Zero(d)), hn::Neg(t), t);
      products[col] += hn::GetLane(hn::SumOfLanes(d, term));
    }
  }
}

// One fused block over k in [k0, k1) for C columns: the products `first`
// and `lanes` take (Taken), added to c_bits[col], the result written back:
// what GemmKernel::fused_block<lanes> returns, column by column.
template <int C, class D>
void Blocks(const GemmKernel& kernel, const FusedLines& x, std::size_t k0, std::size_t k1, int first, int lanes,
            hn::Vec<D> lane, std::uint32_t* c_bits) {
  const D d;
  const Taken<D> taken{k0, k1, first, lanes, lane};
  Operand c[C];
  bool special[C];
  hn::Vec<D> e_max_lanes[C];
  for (int col = 0; col < C; ++col) {
    c[col] = decode_operand(kernel.accumulator, c_bits[col], special[col]);
    e_max_lanes[col] = hn::Set(d, c[col].align);
  }
  const std::int32_t no_offset[C] = {};
  MaxExponents<C, D>(x, k0, k1, taken, no_offset, e_max_lanes);
  std::int32_t e_max[C];
  std::int64_t products[C] = {};
  for (int col = 0; col < C; ++col) e_max[col] = hn::GetLane(hn::MaxOfLanes(d, e_max_lanes[col]));
  AddTerms<C, D>(x, k0, k1, taken, kernel.shift_up, no_offset, e_max, products);
  for (int col = 0; col < C; ++col) {
    // An infinite C decides its block (the products are finite); no term
    // at all gives +0.
    if (special[col]) continue;
    c_bits[col] = e_max[col] < zero_align / 2 ? 0 : kernel.fused_finish(c[col], e_max[col], products[col]);
  }
}

// One block-scaled instruction of len elements for C columns, C = c_bits[col]
// (fp32) and D written back, as BlockScaledKernel::instruction computes it
// with every scaled product its own term and E8M0 scales: e_max over the
// nonzero terms, C's included, the terms truncated at 2^(e_max - F). With
// no nonzero term, instruction() gives -0 only for a -0 C (E8M0 has no zero
// scale, so no zero term is noted but C): D is C.
template <int C>
void ScaledInstruction(const BlockScaledKernel& kernel, int shift_up, const FusedLines& x, const FusedLines& scales,
                       std::size_t len, std::uint32_t* c_bits) {
  const Tag d;
  const hn::Vec<Tag> lane = hn::Iota(d, 0);
  Term c[C];
  bool infinite[C];
  hn::Vec<Tag> e_max_lanes[C];
  for (int col = 0; col < C; ++col) {
    const Unpacked cu = unpack(encodings::fp32(), c_bits[col]);
    infinite[col] = cu.is_inf();
    c[col] = to_term(cu, encodings::fp32());
    e_max_lanes[col] = hn::Set(d, c[col].magnitude != 0 ? c[col].align : zero_align);
  }
  // E8M0 scales are powers of two: each scale block's pair only moves its
  // products' exponents (never zero: E8M0 has no zero).
  const std::size_t s = kernel.scale_block;
  const auto offsets = [&](std::size_t j, std::int32_t* offset) {
    for (int col = 0; col < C; ++col) offset[col] = scales.a_align[j] + scales.b_align[col][j];
  };
  std::int32_t offset[C];
  for (std::size_t k0 = 0; k0 < len; k0 += s) {
    offsets(k0 / s, offset);
    MaxExponents<C, Tag>(x, k0, k0 + s, Taken<Tag>{k0, k0 + s, 0, 4, lane}, offset, e_max_lanes);
  }
  std::int32_t e_max[C];
  std::int64_t products[C] = {};
  for (int col = 0; col < C; ++col) e_max[col] = hn::GetLane(hn::MaxOfLanes(d, e_max_lanes[col]));
  for (std::size_t k0 = 0; k0 < len; k0 += s) {
    offsets(k0 / s, offset);
    AddTerms<C, Tag>(x, k0, k0 + s, Taken<Tag>{k0, k0 + s, 0, 4, lane}, shift_up, offset, e_max, products);
  }
  for (int col = 0; col < C; ++col) {
    // An infinite C decides (the products are finite), as does a zero C
    // with no nonzero product.
    if (infinite[col] || e_max[col] < zero_align / 2) continue;
    c_bits[col] = kernel.finish(c[col], e_max[col], products[col]);
  }
}

template <int C, class D>
void ChunksIn(const GemmKernel& kernel, const FusedLines& x, std::size_t len, std::uint32_t* out) {
  for (int col = 0; col < C; ++col) out[col] = 0;  // +0
  const hn::Vec<D> lane = hn::Iota(D(), 0);
  for (std::size_t k0 = 0; k0 < len; k0 += kernel.block) {
    const std::size_t k1 = len < k0 + kernel.block ? len : k0 + kernel.block;
    if (kernel.structure == DotStructure::fused) {
      Blocks<C, D>(kernel, x, k0, k1, 0, 4, lane, out);
    } else {  // fp16_groups, as GemmKernel::chunk
      std::uint32_t groups[C] = {};
      Blocks<C, D>(kernel, x, k0, k1, 0, 2, lane, groups);
      Blocks<C, D>(kernel, x, k0, k1, 2, 2, lane, groups);
      for (int col = 0; col < C; ++col) out[col] = add_two_nearest(groups[col], out[col], kernel.accumulator);
    }
  }
}

template <int C>
void Chunks(const GemmKernel& kernel, const FusedLines& x, std::size_t len, std::uint32_t* out) {
  if (kernel.block <= 4) {
    ChunksIn<C, QuarterTag>(kernel, x, len, out);
  } else if (kernel.block <= 8) {
    ChunksIn<C, HalfTag>(kernel, x, len, out);
  } else {
    ChunksIn<C, Tag>(kernel, x, len, out);
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

void ScaledInstructions(const BlockScaledKernel& kernel, int shift_up, const FusedLines& x, const FusedLines& scales,
                        std::size_t columns, std::size_t len, std::uint32_t* c_bits) {
  switch (columns) {
    case 1: return ScaledInstruction<1>(kernel, shift_up, x, scales, len, c_bits);
    case 2: return ScaledInstruction<2>(kernel, shift_up, x, scales, len, c_bits);
    case 3: return ScaledInstruction<3>(kernel, shift_up, x, scales, len, c_bits);
    default: return ScaledInstruction<4>(kernel, shift_up, x, scales, len, c_bits);
  }
}

std::size_t Lanes() { return hn::Lanes(Tag()); }

}  // namespace HWY_NAMESPACE
}  // namespace fmtcheck::detail
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace fmtcheck::detail {

HWY_EXPORT(FusedChunks);
HWY_EXPORT(ScaledInstructions);
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

std::optional<int> block_scaled_vector_shift(const BlockScaledKernel& kernel, const Format& input,
                                             const Format& scale_format) {
  if (kernel.group != 0 || scale_format != formats::e8m0) return std::nullopt;
  const int shift_up = kernel.fraction_bits - 2 * input.mantissa_bits;
  const std::uint64_t largest = (std::uint64_t{1} << (input.mantissa_bits + 1)) - 1;  // a significand
  if (shift_up < 0 || ((largest * largest) << shift_up) >= (std::uint64_t{1} << 27)) return std::nullopt;
  return shift_up;
}

void block_scaled_vector(const BlockScaledKernel& kernel, int shift_up, const FusedLines& elements,
                         const FusedLines& scales, std::size_t columns, std::size_t len, std::uint32_t* c_bits) {
  HWY_DYNAMIC_DISPATCH(ScaledInstructions)(kernel, shift_up, elements, scales, columns, len, c_bits);
}

std::size_t fused_vector_lanes() { return HWY_DYNAMIC_DISPATCH(Lanes)(); }

}  // namespace fmtcheck::detail
#endif  // HWY_ONCE
