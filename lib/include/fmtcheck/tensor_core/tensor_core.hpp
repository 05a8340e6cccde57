// Bit-exact models of tensor-core (NVIDIA) and matrix-core (AMD) dot
// products D = A·B + C.
//
// A tensor core does not add like IEEE hardware. Per the published analyses
// (Fasi et al. 2021; MMA-Sim, arXiv 2511.10909; Khattak & Mikaitis,
// arXiv 2512.07004) one instruction mostly forms a fused block of L exact
// products plus C; every term is truncated toward zero at 2^(e_max - F),
// where e_max is the largest binade exponent among the block's nonzero
// terms; the truncated terms are summed exactly, normalised once and rounded
// to the output format. Some instructions combine their products otherwise
// (DotStructure). Longer K chains instructions in order of k, each one's D
// being the next one's C. docs/tensor-core.md cites the source of every
// number.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fmtcheck/arith/dot.hpp"
#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/policy.hpp"
#include "fmtcheck/core/round_to_format.hpp"

namespace fmtcheck {

// How one instruction combines its products and C. docs/tensor-core.md
// gives each structure's source and the data that checks it.
enum class DotStructure {
  // The L products and C as one fused block (every NVIDIA instruction but
  // FP8 mma.sync; AMD CDNA1 with exact alignment).
  fused,
  // FP8 mma.sync on Hopper and Blackwell: an instruction (K = L) converts its
  // operands to fp16 and runs two fp16 blocks of L/2 with F and the output's
  // rounding: k mod 4 in {0,1} from a zero accumulator, then k mod 4 in {2,3}
  // with the first's result as C. C is added last by one IEEE addition,
  // rounded to nearest even.
  fp16_groups,
  // AMD CDNA2 (MI210, MI250): subnormal inputs, products, C and sums are
  // flushed to zero; the L products (exact in fp32) are summed as a pairwise
  // tree of fp32 additions ((p0+p1)+(p2+p3)), then C is added; each addition
  // rounds to nearest even.
  pairwise,
  // AMD CDNA3 (MI300): the nonzero products are aligned and truncated at
  // 2^(e_max - F) and summed without C. The sum and C are then aligned to the
  // larger of e_max and C's exponent e_c (at least -126), the other one
  // rounded toward minus infinity to F bits below e_max, or F + 7 bits below
  // e_c; the two are added and rounded once to nearest even.
  late_c,
  // AMD CDNA3 FP8: as late_c, but the even and the odd k are summed as two
  // blocks, each aligned to its own largest exponent, and the two sums are
  // added with the smaller rounded toward minus infinity; C more than 25
  // binades below e_max is truncated toward zero instead.
  odd_even,
};

// One instruction's arithmetic for one input type.
struct DotModel {
  // F meaning "keep every bit": the block is summed exactly.
  static constexpr int exact_alignment = -1;
  // L meaning "all of K in one block".
  static constexpr int whole_k = 0;

  DotStructure structure = DotStructure::fused;
  int block_size = whole_k;                // L: products per instruction (fused with C when fused)
  int fraction_bits = exact_alignment;     // F: bits kept below e_max's leading bit
  Rounding fp32_rounding = Rounding::rtz;  // fp32 output (hardware: toward zero)
  int fp32_fraction_bits = 23;             // 13 on Ada and Hopper FP8: the sum is truncated further
  Rounding fp16_rounding = Rounding::rne;  // fp16 output (hardware: nearest even)
  bool writes_fp16 = true;                 // false: fp32 output only (AMD matrix cores)

  friend bool operator==(const DotModel&, const DotModel&) = default;
};

// A named model: one GPU architecture and instruction family, with the
// arithmetic it uses for each input type it supports.
struct TensorCoreModel {
  std::string name;         // "ampere", "hopper-wgmma", "exact", ...
  std::string description;  // one line: GPUs, instruction, source
  struct Entry {
    std::string input;  // input format name: "fp16", "bf16", "tf32", "e4m3", "e5m2"
    DotModel dot;
  };
  std::vector<Entry> entries;

  // The models that are not hardware (exact, ideal-fp32): they take any
  // format fmtcheck knows (P3109, MX FP6/FP4, eXmY) with their one arithmetic.
  [[nodiscard]] bool takes_any_format() const { return name == "exact" || name == "ideal-fp32"; }

  // The arithmetic for `input`, or nullopt when the instruction does not
  // take that type (or nothing about it is published).
  [[nodiscard]] std::optional<DotModel> for_input(const Format& input) const;
  // The same, throwing std::invalid_argument ("model 'volta' has no
  // published arithmetic for e4m3 inputs") where there is none.
  [[nodiscard]] DotModel arithmetic_for(const Format& input) const;
  // The arithmetic for A in `a` and B in `b` (E4M3 x E5M2, say): the two
  // types' entries when they are the same, else nullopt.
  [[nodiscard]] std::optional<DotModel> for_inputs(const Format& a, const Format& b) const;
};

// Every preset, in the order `fmtcheck mma --help` lists them.
std::span<const TensorCoreModel> tensor_core_models();
// A preset by name, or nullopt.
const TensorCoreModel* find_tensor_core_model(std::string_view name);
// The same, throwing std::invalid_argument ("unknown --model 'x': expected
// one of ...") when there is none.
const TensorCoreModel& tensor_core_model(std::string_view name);

// Output formats a tensor core writes: fp32 or fp16.
bool is_tensor_core_output(const Format& out);

// D = sum_k a[k]*b[k] + c under `model`, blocks of L taken in order of k.
// a and b hold container bits of `input` (tf32: float32 bits, whose low 13
// bits the tensor core ignores); c and the result are container bits of
// `out` (fp32 or fp16). Special values: any NaN, inf*0 or inf-inf gives the
// canonical NaN (0x7FFFFFFF, 0x7FFF); otherwise an infinite term gives that
// infinity. The flags are those of the last block's rounding.
Conversion dot_product_add(const DotModel& model, const Format& input, std::span<const std::uint64_t> a,
                           std::span<const std::uint64_t> b, std::uint64_t c, const Format& out);
// The same with A in `input_a` and B in `input_b` (mixed E4M3 x E5M2
// operands, as FP8 backward passes use). An fp16 output for a model that
// writes fp32 only throws std::invalid_argument.
Conversion dot_product_add(const DotModel& model, const Format& input_a, const Format& input_b,
                           std::span<const std::uint64_t> a, std::span<const std::uint64_t> b, std::uint64_t c,
                           const Format& out);

// A block-scaled instruction (Blackwell tcgen05.mma / sm_120 mma.sync with
// .block_scale), as MMA-Sim models it: every product is scaled by its block's
// two scale factors, whose exponents (not the products') align the term;
// with group = 0 each scaled product is a term (kind::mxf8f6f4, F = 25),
// with group = 16 each 16 products are first summed exactly and that sum,
// times both scales' significands, is one term (kind::mxf4, mxf4nvf4,
// F = 35). Terms and C are truncated at 2^(e_max - F), summed, and rounded
// toward zero to fp32.
struct BlockScaledModel {
  int fraction_bits = 25;
  std::size_t group = 0;

  friend bool operator==(const BlockScaledModel&, const BlockScaledModel&) = default;
};
inline constexpr BlockScaledModel blackwell_mxf8f6f4{25, 0};
inline constexpr BlockScaledModel blackwell_mxf4{35, 16};

// D = sum_k (a[k] * scale_a[k / S]) * (b[k] * scale_b[k / S]) + c for one
// instruction (K = a.size(), S = K / scale_a.size(), the scale block). The
// scales are e8m0 (UE8M0) or e4m3 (UE4M3, sign ignored); c and the result
// are fp32 bits. NaN, inf*0 and inf-inf (a NaN scale included) give
// 0x7FFFFFFF. Throws std::invalid_argument for sizes that do not divide, a
// group that does not divide S, or inputs whose group sums overflow 64 bits
// (e5m2 and wider; e2m1, e2m3, e3m2 and e4m3 fit).
Conversion block_scaled_dot_product_add(const BlockScaledModel& model, const Format& input,
                                        std::span<const std::uint64_t> a, std::span<const std::uint64_t> b,
                                        const Format& scale_format, std::span<const std::uint64_t> scale_a,
                                        std::span<const std::uint64_t> scale_b, std::uint64_t c);

// The model as a DotKernel for matmul (dot.hpp): each output element is one
// dot_product_add with C = +0 into `out` (fp32 or fp16). The hardware's
// rounding is fixed, so the kernel ignores the policy; it throws
// std::invalid_argument for an output a tensor core cannot write or an input
// the model does not take.
DotKernel tensor_core_kernel(const TensorCoreModel& model);

}  // namespace fmtcheck
