#include "fmtcheck/cuda/mma_cases.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <stdexcept>

#include "random_codes.hpp"

namespace fmtcheck::cuda {
namespace {

using detail::Draws;
using detail::random_code;

// ±2^e, e in a band of 12 binades around 1, as a code of f.
std::uint64_t power_code(const Format& f, Draws& d) {
  const std::uint64_t sign = d.below(2) ? f.sign_bit() : 0;
  const int lo = std::max(1, f.bias - 6), hi = std::min(f.bias + 6, static_cast<int>(f.max_finite_code() >> f.mantissa_bits));
  const auto field = static_cast<std::uint64_t>(lo + static_cast<int>(d.below(static_cast<std::uint64_t>(hi - lo + 1))));
  return sign | (field << f.mantissa_bits);
}

std::uint64_t special_code(const Format& f, Draws& d) {
  switch (d.below(8)) {
    case 0: return f.specials == Specials::ieee ? f.infinity_code() | (std::uint64_t{1} << (f.mantissa_bits - 1))
                                                : f.magnitude_mask();  // NaN
    case 1: return f.has_inf() ? f.infinity_code() : f.max_finite_code();
    case 2: return f.has_inf() ? f.sign_bit() | f.infinity_code() : f.sign_bit() | f.max_finite_code();
    case 3: return f.sign_bit();  // -0
    default: return random_code(f, d);
  }
}

std::uint32_t word(const Format& f, std::uint64_t code) { return static_cast<std::uint32_t>(f.to_storage(code)); }

}  // namespace

ModelChoice model_for(const MmaInstruction& ins, int cc) {
  if (ins.family == MmaFamily::wgmma) {
    if (cc >= 90 && cc < 100) return {find_tensor_core_model("hopper-wgmma"), ""};
    return {nullptr, "wgmma runs only on compute capability 9.0 (sm_90a)"};
  }
  if (cc >= 100) return {nullptr, "no published tensor-core parameters for compute capability 10.0 and later"};
  // FP8 mma.sync on sm_90 runs through two fp16 HMMA blocks (the hopper preset).
  if (cc >= 90) return {find_tensor_core_model("hopper"), ""};
  if (cc >= 89) return {find_tensor_core_model("ada"), ""};
  if (cc >= 80) return {find_tensor_core_model("ampere"), ""};
  return {nullptr, "compute capability below 8.0 is not built"};
}

MmaTiles make_tiles(const MmaInstruction& ins, CaseKind kind, std::size_t count, std::uint64_t seed) {
  const Format& in = *ins.input;
  const Format& out = *ins.output;
  Draws d(seed);
  auto operand = [&] {
    switch (kind) {
      case CaseKind::random: return random_code(in, d);
      case CaseKind::powers: return power_code(in, d);
      case CaseKind::specials: return special_code(in, d);
    }
    return std::uint64_t{0};
  };
  // tf32: the generated codes sit in the top 19 bits; the low 13 bits of the
  // register get random bits too, which the tensor core must ignore.
  auto input_word = [&] {
    std::uint32_t w = word(in, operand());
    if (in == formats::tf32) w |= static_cast<std::uint32_t>(d.next() & 0x1FFF);
    return w;
  };
  MmaTiles t;
  t.count = count;
  const std::size_t m = static_cast<std::size_t>(ins.m()), k = static_cast<std::size_t>(ins.k());
  t.a.resize(count * m * k);
  t.b.resize(count * 8 * k);
  t.c.resize(count * m * 8);
  for (auto& w : t.a) w = input_word();
  for (auto& w : t.b) w = input_word();
  for (auto& w : t.c) w = word(out, kind == CaseKind::specials ? special_code(out, d) : random_code(out, d));
  return t;
}

std::vector<std::uint32_t> emulate_tiles(const MmaInstruction& ins, const DotModel& model, const MmaTiles& tiles) {
  check_tiles(ins, tiles);
  const std::size_t m = static_cast<std::size_t>(ins.m()), k = static_cast<std::size_t>(ins.k());
  std::vector<std::uint32_t> d(tiles.c.size());
  std::vector<std::uint64_t> a(k), b(k);
  for (std::size_t t = 0; t < tiles.count; ++t) {
    for (std::size_t row = 0; row < m; ++row) {
      for (std::size_t col = 0; col < 8; ++col) {
        for (std::size_t j = 0; j < k; ++j) {
          a[j] = tiles.a[(t * m + row) * k + j];
          b[j] = tiles.b[(t * 8 + col) * k + j];
        }
        const std::size_t i = (t * m + row) * 8 + col;
        d[i] = static_cast<std::uint32_t>(dot_product_add(model, *ins.input, a, b, tiles.c[i], *ins.output).bits);
      }
    }
  }
  return d;
}

Comparison compare_tiles(const MmaInstruction& ins, const MmaTiles& tiles, const std::vector<std::uint32_t>& hardware,
                         const std::vector<std::uint32_t>& emulator, std::string title) {
  if (hardware.size() != tiles.c.size() || emulator.size() != tiles.c.size()) {
    throw std::invalid_argument("compare_tiles: D sizes differ from C");
  }
  Comparison c{std::move(title), *ins.output};
  const std::size_t m = static_cast<std::size_t>(ins.m()), k = static_cast<std::size_t>(ins.k());
  const int digits = ins.input->storage_bits / 4;
  for (std::size_t i = 0; i < hardware.size(); ++i) {
    c.check(hardware[i], emulator[i], [&] {
      const std::size_t t = i / (m * 8), row = i % (m * 8) / 8, col = i % 8;
      std::string s = fmt::format("tile {} row {} col {}: a =", t, row, col);
      for (std::size_t j = 0; j < k; ++j) s += fmt::format(" {:0{}x}", tiles.a[(t * m + row) * k + j], digits);
      s += "; b =";
      for (std::size_t j = 0; j < k; ++j) s += fmt::format(" {:0{}x}", tiles.b[(t * 8 + col) * k + j], digits);
      return s + fmt::format("; c = {:0{}x}", tiles.c[i], ins.output->storage_bits / 4);
    });
  }
  return c;
}

DotOracle mma_oracle(const MmaInstruction& ins) {
  return [&ins](std::span<const std::uint64_t> a, std::span<const std::uint64_t> b, std::uint64_t c) {
    MmaTiles t;
    t.count = 1;
    t.a.assign(static_cast<std::size_t>(ins.m()) * a.size(), 0);
    t.b.assign(8 * b.size(), 0);
    t.c.assign(static_cast<std::size_t>(ins.m()) * 8, 0);
    std::copy(a.begin(), a.end(), t.a.begin());
    std::copy(b.begin(), b.end(), t.b.begin());
    t.c[0] = static_cast<std::uint32_t>(c);
    return std::uint64_t{run_mma(ins, t)[0]};
  };
}

}  // namespace fmtcheck::cuda
