// The host side of `hw gemm`: argument checks, operands, the emulated GEMM
// and the comparison; everything here runs without a GPU.
#include <bit>
#include <fmt/format.h>
#include <stdexcept>

#include "fmtcheck/core/convert.hpp"
#include "fmtcheck/cuda/blaslt_gemm.hpp"
#include "fmtcheck/cuda/emulated_gemm.hpp"
#include "fmtcheck/cuda/convert.hpp"
#include "random_codes.hpp"

namespace fmtcheck::cuda {

bool BlasLtGemm::fp8() const { return *input == formats::e4m3 || *input == formats::e5m2; }

std::string BlasLtGemm::name() const {
  std::string s = input->name + " -> " + output->name;
  if (fp8()) {
    s += fast_accum ? ", fast accum" : ", no fast accum";
    s += fmt::format(", scales a={} b={} d={}", scale_a, scale_b, scale_d);
  }
  return s;
}

void check_gemm(const BlasLtGemm& g, const GemmOperands& x) {
  const Format& in = *g.input;
  if (in == formats::e5m2) {
    throw std::invalid_argument("cuBLASLt has no e5m2 x e5m2 GEMM (only e4m3 x e4m3 and mixed e4m3/e5m2)");
  }
  if (in != formats::fp16 && in != formats::bf16 && in != formats::tf32 && in != formats::e4m3) {
    throw std::invalid_argument("hw gemm takes fp16, bf16, tf32 or e4m3, not " + in.name);
  }
  if (*g.output != formats::fp32 && !(g.fp8() && *g.output == formats::e4m3)) {
    throw std::invalid_argument("hw gemm writes fp32 (or e4m3 from e4m3 inputs), not " + g.output->name);
  }
  if (!g.fp8() && (g.fast_accum || g.scale_a != 1.0f || g.scale_b != 1.0f || g.scale_d != 1.0f)) {
    throw std::invalid_argument("fast accumulation and scale factors apply to FP8 GEMMs only");
  }
  if (*g.output != formats::e4m3 && g.scale_d != 1.0f) {
    throw std::invalid_argument("the D scale applies to an e4m3 output only");
  }
  if (x.m == 0 || x.n == 0 || x.k == 0) throw std::invalid_argument("gemm: M, N and K must be positive");
  // cuBLASLt FP8 needs 16-byte aligned leading dimensions: K a multiple of 16.
  if (g.fp8() && x.k % 16 != 0) throw std::invalid_argument("FP8 GEMMs need K to be a multiple of 16");
  if (x.a.size() != x.m * x.k || x.b.size() != x.k * x.n || x.c.size() != x.m * x.n) {
    throw std::invalid_argument(fmt::format("gemm: A, B, C hold {}, {}, {} values; M={} N={} K={} need {}, {}, {}",
                                            x.a.size(), x.b.size(), x.c.size(), x.m, x.n, x.k, x.m * x.k,
                                            x.k * x.n, x.m * x.n));
  }
  for (const auto* words : {&x.a, &x.b}) {
    for (const std::uint32_t w : *words) {
      if ((w & ~in.storage_mask()) != 0) throw std::invalid_argument("gemm: an operand word is wider than " + in.name);
    }
  }
}

std::vector<std::uint32_t> emulate_blaslt_gemm(const BlasLtGemm& g, const DotModel& model, std::size_t promote_every,
                                               const GemmOperands& x, bool on_gpu) {
  check_gemm(g, x);
  GemmConfig config;
  config.model = model;
  config.input = *g.input;
  config.scale_a = g.scale_a;
  config.scale_b = g.scale_b;
  config.promote_every = promote_every;
  std::vector<float> d(x.m * x.n);
  const bool fp8_out = *g.output == formats::e4m3;
  // An e4m3 D takes no C (the GEMM runs with beta = 0).
  const std::vector<float> zero(fp8_out ? x.c.size() : 0, 0.0f);
  const std::span<const float> c = fp8_out ? std::span<const float>(zero) : std::span<const float>(x.c);
  if (on_gpu) {
    gemm_on_gpu(config, x.m, x.n, x.k, x.a, x.b, c, d);
  } else {
    gemm(config, x.m, x.n, x.k, x.a, x.b, c, d);
  }
  std::vector<std::uint32_t> out(d.size());
  const Policy to_e4m3 = find_device_conversion(formats::e4m3, Rounding::rne)->policy();
  for (std::size_t i = 0; i < d.size(); ++i) {
    out[i] = fp8_out ? static_cast<std::uint32_t>(convert(d[i] * g.scale_d, formats::e4m3, to_e4m3).bits)
                     : std::bit_cast<std::uint32_t>(d[i]);
  }
  return out;
}

std::vector<std::size_t> promotion_candidates(std::size_t k) {
  std::vector<std::size_t> out;
  for (std::size_t p = 32; p < k; p *= 2) out.push_back(p);
  out.push_back(k);
  return out;
}

GemmOperands make_gemm_operands(const BlasLtGemm& g, std::size_t m, std::size_t n, std::size_t k, std::uint64_t seed) {
  detail::Draws d(seed);
  GemmOperands x;
  x.m = m;
  x.n = n;
  x.k = k;
  x.a.resize(m * k);
  x.b.resize(k * n);
  x.c.resize(m * n);
  for (auto* words : {&x.a, &x.b}) {
    for (auto& w : *words) w = static_cast<std::uint32_t>(g.input->to_storage(detail::random_code(*g.input, d)));
  }
  for (auto& v : x.c) v = std::bit_cast<float>(static_cast<std::uint32_t>(detail::random_code(formats::fp32, d)));
  return x;
}

Comparison compare_gemm(const BlasLtGemm& g, const GemmOperands& x, const std::vector<std::uint32_t>& hardware,
                        const std::vector<std::uint32_t>& emulator, std::string title) {
  if (hardware.size() != x.m * x.n || emulator.size() != x.m * x.n) {
    throw std::invalid_argument("compare_gemm: D sizes differ from M×N");
  }
  Comparison c{std::move(title), *g.output};
  const int digits = (g.input->storage_bits + 3) / 4;
  for (std::size_t i = 0; i < hardware.size(); ++i) {
    c.check(hardware[i], emulator[i], [&] {
      const std::size_t row = i / x.n, col = i % x.n;
      std::string s = fmt::format("row {} col {}: a =", row, col);
      for (std::size_t j = 0; j < x.k; ++j) s += fmt::format(" {:0{}x}", x.a[row * x.k + j], digits);
      s += "; b =";
      for (std::size_t j = 0; j < x.k; ++j) s += fmt::format(" {:0{}x}", x.b[j * x.n + col], digits);
      return s + fmt::format("; c = {:08x}", std::bit_cast<std::uint32_t>(x.c[i]));
    });
  }
  return c;
}

}  // namespace fmtcheck::cuda
