// The CPU's vector kernel for fused blocks (lib/src/tensor_core/fused_vector)
// is GemmKernel::chunk in vector lanes: bit for bit the same on every model
// it covers, one to four columns at a time, on each SIMD target Highway
// compiled that this CPU runs (picked with SetSupportedTargetsForTest), for
// random lines over the whole exponent range and over a narrow one (long
// carries, cancellation), and for the extremes its 32-bit lanes must hold:
// every product at the largest significand and exponent, terms shifted out
// entirely, subnormals, an fp16 accumulator that overflows. Block-scaled
// instructions (kind::mxf8f6f4) likewise against
// BlockScaledKernel::instruction, with instructions of zero products and
// every kind of C. test_gemm.cpp and test_gemm_block_scaled.cpp
// check gemm() and gemm_block_scaled(), which run these kernels, against
// the reference dot products.
#include <doctest/doctest.h>
#include <hwy/targets.h>

#include <random>
#include <set>
#include <string>
#include <vector>

#include "fmtcheck/core/format.hpp"
#include "fmtcheck/tensor_core/block_scaled_kernel.hpp"
#include "fmtcheck/tensor_core/gemm.hpp"
#include "fmtcheck/tensor_core/gemm_kernel.hpp"
#include "fmtcheck/tensor_core/tensor_core.hpp"
#include "tensor_core/fused_vector.hpp"

using namespace fmtcheck;

namespace {

// One operand line as gemm() hands it to the kernels.
struct Line {
  std::vector<std::int32_t> sig, align;
};

// GemmKernel::chunk reads a line through sig(k) and align(k).
struct LineView {
  const Line* line;
  [[nodiscard]] std::int32_t sig(std::size_t k) const { return line->sig[k]; }
  [[nodiscard]] std::int32_t align(std::size_t k) const { return line->align[k]; }
};

// How a line's values are drawn.
enum class Values { any_finite, near_one, largest, one_large, mostly_zero };

// A finite code of f: sign, exponent field and mantissa as `values` asks.
std::uint64_t draw(const Format& f, Values values, std::size_t k, std::mt19937& rng) {
  const std::uint64_t mantissa_mask = (std::uint64_t{1} << f.mantissa_bits) - 1;
  const std::uint64_t top_field = (std::uint64_t{1} << f.exponent_bits) - 1;
  std::uint64_t sign = std::uint64_t{rng() & 1u} << (f.mantissa_bits + f.exponent_bits);
  std::uint64_t field = 0, mantissa = rng() & mantissa_mask;
  switch (values) {
    case Values::any_finite: field = rng() % top_field; break;  // the top field may hold NaN or inf
    case Values::near_one: field = top_field / 2 - 2 + rng() % 5; break;
    case Values::largest: field = top_field - 1, mantissa = mantissa_mask, sign = 0; break;
    case Values::one_large: field = k == 0 ? top_field - 1 : rng() % 3; break;  // the rest subnormal or tiny
    case Values::mostly_zero:  // whole instructions of zero products, some of them -0 x +0
      if (rng() % 64 != 0) return f.to_storage(sign);
      field = top_field / 2;
      break;
  }
  if (values == Values::any_finite && rng() % 4 == 0) return 0;  // zeros are common in real tensors
  return f.to_storage((field << f.mantissa_bits) | mantissa | sign);
}

// The padding past a line that the vector kernel may load and must
// ignore: values that would change its results if it did not.
void pad(Line& line, std::mt19937& rng) {
  for (std::size_t p = 0; p < detail::fused_vector_padding; ++p) {
    line.sig.push_back(static_cast<std::int32_t>(rng() % 2048) - 1024);
    line.align.push_back(static_cast<std::int32_t>(rng() % 300) - 100);
  }
}

Line random_line(const Format& f, Values values, std::size_t len, std::mt19937& rng) {
  Line line;
  for (std::size_t k = 0; k < len; ++k) {
    bool special = false;
    const detail::Operand o = detail::decode_operand(f, draw(f, values, k, rng), special);
    REQUIRE(!special);
    line.sig.push_back(o.sig);
    line.align.push_back(o.align);
  }
  pad(line, rng);
  return line;
}

// Every (model, input, accumulator) the vector kernel covers.
struct Case {
  std::string name;
  detail::GemmKernel kernel;
  Format read_a, read_b;  // the formats gemm() decodes the lines as
};
std::vector<Case> covered_cases() {
  std::vector<Case> cases;
  for (const TensorCoreModel& model : tensor_core_models()) {
    for (const Format* f : {&formats::fp16, &formats::bf16, &formats::tf32, &formats::e4m3, &formats::e5m2}) {
      const auto dot = model.for_input(*f);
      if (!dot) continue;
      for (const Format* accumulator : {&formats::fp32, &formats::fp16}) {
        if (*accumulator == formats::fp16 && !dot->writes_fp16) continue;
        GemmConfig g;
        g.model = *dot;
        g.input = *f;
        g.accumulator = *accumulator;
        const detail::GemmSetup setup = detail::plan_gemm(g, 64);
        if (!setup.fast || !detail::fused_vector_covers(setup.kernel)) continue;
        cases.push_back({model.name + " " + f->name + " into " + accumulator->name, setup.kernel, setup.read_a,
                         setup.read_b});
      }
    }
  }
  return cases;
}

// Wrong outputs of the vector kernel against GemmKernel::chunk, over
// lengths around the block sizes and 1 to 4 columns.
std::size_t wrong_chunks(const Case& c, Values values, std::mt19937& rng) {
  std::size_t wrong = 0;
  for (const std::size_t len : {1, 2, 3, 4, 7, 8, 9, 15, 16, 17, 31, 32, 33, 45, 64, 100}) {
    const Line row = random_line(c.read_a, values, len, rng);
    std::vector<Line> columns;
    for (std::size_t col = 0; col < detail::fused_vector_columns; ++col) {
      columns.push_back(random_line(c.read_b, values, len, rng));
    }
    for (std::size_t count = 1; count <= detail::fused_vector_columns; ++count) {
      detail::FusedLines lines{row.sig.data(), row.align.data(), {}, {}};
      for (std::size_t col = 0; col < count; ++col) {
        lines.b_sig[col] = columns[col].sig.data();
        lines.b_align[col] = columns[col].align.data();
      }
      std::uint32_t out[detail::fused_vector_columns];
      detail::fused_chunks_vector(c.kernel, lines, count, len, out);
      for (std::size_t col = 0; col < count; ++col) {
        const std::uint32_t want = c.kernel.chunk(LineView{&row}, LineView{&columns[col]}, len);
        if (out[col] != want && ++wrong <= 3) {
          FAIL_CHECK(c.name << ", K = " << len << ", column " << col << " of " << count << ": bits " << out[col]
                            << ", GemmKernel::chunk " << want);
        }
      }
    }
  }
  return wrong;
}

}  // namespace

TEST_CASE("the fused vector kernel gives GemmKernel::chunk's bits, every covered model, every target") {
  const std::vector<Case> cases = covered_cases();
  // Every NVIDIA preset's fp16, bf16, tf32 and FP8 arithmetic is covered.
  std::set<std::string> models;
  for (const Case& c : cases) models.insert(c.name.substr(0, c.name.find(' ')));
  CHECK(models == std::set<std::string>{"ada", "ampere", "blackwell", "blackwell-rtx", "blackwell-tcgen05", "hopper",
                                        "hopper-wgmma", "turing", "volta"});
  hwy::SetSupportedTargetsForTest(0);
  const std::vector<std::int64_t> targets = hwy::SupportedAndGeneratedTargets();
  std::set<std::size_t> widths;
  for (const std::int64_t target : targets) {
    const std::string target_name = hwy::TargetName(target);
    CAPTURE(target_name);
    hwy::SetSupportedTargetsForTest(target);
    widths.insert(detail::fused_vector_lanes());
    std::mt19937 rng(static_cast<unsigned>(target));
    for (const Case& c : cases) {
      for (const Values values :
           {Values::any_finite, Values::near_one, Values::largest, Values::one_large, Values::mostly_zero}) {
        CAPTURE(static_cast<int>(values));
        CHECK(wrong_chunks(c, values, rng) == 0);
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
  std::string lanes;
  for (const std::size_t w : widths) lanes.append(" ").append(std::to_string(w));
  MESSAGE(targets.size() << " targets run, lanes" << lanes);
  CHECK(!targets.empty());
}

TEST_CASE("the fused vector kernel leaves exact alignment, AMD's structures and F above 25 to the scalar kernel") {
  for (const char* name : {"mi100", "mi250", "mi300x", "exact", "ideal-fp32"}) {
    CAPTURE(name);
    GemmConfig g;
    g.model = *find_tensor_core_model(name)->for_input(formats::fp16);
    g.input = formats::fp16;
    CHECK(!detail::fused_vector_covers(detail::plan_gemm(g, 16).kernel));
  }
  GemmConfig g;
  g.model = *find_tensor_core_model("hopper")->for_input(formats::bf16);
  g.input = formats::bf16;
  CHECK(detail::fused_vector_covers(detail::plan_gemm(g, 16).kernel));
  g.model.fraction_bits = 26;  // 16 terms could reach 2^32
  CHECK(!detail::fused_vector_covers(detail::plan_gemm(g, 16).kernel));
}

namespace {

// A block-scaled operand line, as the scalar kernel reads it.
struct ScaledView {
  const std::vector<detail::ScaledOperand>* line;
  [[nodiscard]] std::int32_t sig(std::size_t k) const { return (*line)[k].sig; }
  [[nodiscard]] std::int32_t lsb(std::size_t k) const { return (*line)[k].lsb; }
  [[nodiscard]] std::int32_t align(std::size_t k) const { return (*line)[k].align; }
};

// Codes of f decoded both ways: the scalar kernel's and the vector kernel's.
struct BothLines {
  std::vector<detail::ScaledOperand> scalar;
  Line vector;
};
BothLines decode_both(const Format& f, const std::vector<std::uint64_t>& codes, bool scale, std::mt19937& rng) {
  BothLines out;
  for (const std::uint64_t code : codes) {
    bool special = false;
    out.scalar.push_back(detail::decode_scaled_operand(f, code, scale, special));
    const detail::Operand o = detail::decode_operand(f, code, special);
    REQUIRE(!special);
    out.vector.sig.push_back(o.sig);
    out.vector.align.push_back(o.align);
  }
  pad(out.vector, rng);
  return out;
}

// C of every kind: zeros of both signs, an infinity, and finite values from
// tiny to huge.
std::uint32_t random_c(std::mt19937& rng) {
  static constexpr std::uint32_t kinds[] = {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x00000001u};
  if (rng() % 8 == 0) return kinds[rng() % 5];
  return (rng() & 0x80000000u) | (static_cast<std::uint32_t>(rng() % 254 + 1) << 23) | (rng() & 0x7fffffu);
}

}  // namespace

TEST_CASE("the block-scaled vector kernel gives BlockScaledKernel::instruction's bits, every target") {
  struct Kind {
    const Format* input;
    std::size_t scale_block, instruction_k;
  };
  const std::vector<Kind> kinds = {{&formats::e4m3, 32, 32}, {&formats::e5m2, 32, 32}, {&formats::e3m2, 32, 32},
                                   {&formats::e2m3, 32, 32}, {&formats::e2m1, 32, 32}, {&formats::e4m3, 16, 32},
                                   {&formats::e4m3, 32, 64}};
  hwy::SetSupportedTargetsForTest(0);
  const std::vector<std::int64_t> targets = hwy::SupportedAndGeneratedTargets();
  std::size_t zero_seen = 0;
  for (const std::int64_t target : targets) {
    const std::string target_name = hwy::TargetName(target);
    CAPTURE(target_name);
    hwy::SetSupportedTargetsForTest(target);
    std::mt19937 rng(static_cast<unsigned>(target) + 1);
    for (const Kind& kind : kinds) {
      BlockScaledGemmConfig g;
      g.input = *kind.input;
      g.scale_block = kind.scale_block;
      g.instruction_k = kind.instruction_k;
      const detail::BlockScaledKernel kernel = detail::plan_block_scaled(g);
      const std::optional<int> shift_up = detail::block_scaled_vector_shift(kernel, g.input, formats::e8m0);
      REQUIRE(shift_up.has_value());
      const std::size_t len = kind.instruction_k, scales = len / kind.scale_block;
      std::size_t wrong = 0;
      for (const Values values :
           {Values::any_finite, Values::near_one, Values::largest, Values::one_large, Values::mostly_zero}) {
        for (int round = 0; round < 20; ++round) {
          const auto codes = [&](const Format& f, std::size_t count, bool scale) {
            std::vector<std::uint64_t> out;
            for (std::size_t k = 0; k < count; ++k) {
              // E8M0 scales from 2^-127 to 2^127 (0xff is NaN): the products' exponents span them.
              out.push_back(scale ? rng() % 255 : draw(f, values, k, rng));
            }
            return decode_both(f, out, scale, rng);
          };
          const BothLines row = codes(g.input, len, false), row_scales = codes(formats::e8m0, scales, true);
          std::vector<BothLines> columns, column_scales;
          for (std::size_t col = 0; col < detail::fused_vector_columns; ++col) {
            columns.push_back(codes(g.input, len, false));
            column_scales.push_back(codes(formats::e8m0, scales, true));
          }
          for (std::size_t count = 1; count <= detail::fused_vector_columns; ++count) {
            detail::FusedLines elements{row.vector.sig.data(), row.vector.align.data(), {}, {}};
            detail::FusedLines scale_lines{row_scales.vector.sig.data(), row_scales.vector.align.data(), {}, {}};
            std::uint32_t c[detail::fused_vector_columns], got[detail::fused_vector_columns];
            for (std::size_t col = 0; col < count; ++col) {
              elements.b_sig[col] = columns[col].vector.sig.data();
              elements.b_align[col] = columns[col].vector.align.data();
              scale_lines.b_sig[col] = column_scales[col].vector.sig.data();
              scale_lines.b_align[col] = column_scales[col].vector.align.data();
              c[col] = got[col] = random_c(rng);
            }
            detail::block_scaled_vector(kernel, *shift_up, elements, scale_lines, count, len, got);
            for (std::size_t col = 0; col < count; ++col) {
              const std::uint32_t want =
                  kernel.instruction(ScaledView{&row.scalar}, ScaledView{&columns[col].scalar},
                                     ScaledView{&row_scales.scalar}, ScaledView{&column_scales[col].scalar}, len, c[col]);
              if ((want & 0x7fffffffu) == 0 && (c[col] & 0x7fffffffu) == 0) ++zero_seen;
              if (got[col] != want && ++wrong <= 3) {
                FAIL_CHECK(g.input.name << " per " << kind.scale_block << ", K = " << len << ", column " << col
                                        << " of " << count << ": bits " << got[col] << ", instruction " << want
                                        << " (C " << c[col] << ")");
              }
            }
          }
        }
      }
      CHECK(wrong == 0);
    }
  }
  hwy::SetSupportedTargetsForTest(0);
  CHECK(zero_seen > 0);  // instructions of zero products were drawn, after a zero C
}

TEST_CASE("the block-scaled vector kernel leaves groups and UE4M3 scales to the scalar kernel") {
  BlockScaledGemmConfig g;
  CHECK(detail::block_scaled_vector_shift(detail::plan_block_scaled(g), formats::e4m3, formats::e8m0) == 19);
  // UE4M3 scales: 15^4 x 2^13 reaches 2^28.
  CHECK(!detail::block_scaled_vector_shift(detail::plan_block_scaled(g), formats::e4m3, formats::e4m3));
  g.model = blackwell_mxf4;  // groups of 16 products summed exactly first
  g.input = formats::e2m1;
  CHECK(!detail::block_scaled_vector_shift(detail::plan_block_scaled(g), formats::e2m1, formats::e8m0));
}
