// On a GPU: fmtcheck's own conversions computed there (cuda/src/emulator/)
// equal the CPU's batch conversion value for value and flag for flag, for
// every preset but fp64, every P3109 member and a user format, under every
// rounding mode (stochastic ones with the same seed), overflow mode,
// subnormal mode, tininess rule and NaN convention; inputs: random bit
// patterns, the specials, and values around each format's extremes.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "fmtcheck/batch/convert_batch.hpp"
#include "fmtcheck/core/policy.hpp"
#include "fmtcheck/cuda/emulated_convert.hpp"

using namespace fmtcheck;

namespace {

std::vector<float> inputs(const Format& f) {
  std::mt19937 rng(2026);
  std::vector<float> v;
  for (int i = 0; i < 1 << 14; ++i) v.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(rng())));
  for (const std::uint32_t bits : {0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC12345u,
                                   0x7F800001u, 0x00000001u, 0x807FFFFFu, 0x7F7FFFFFu}) {
    v.push_back(std::bit_cast<float>(bits));
  }
  // Around the largest finite value and the subnormal range, both signs.
  const double top = std::ldexp(1.0, f.max_exponent() + 1), tiny = std::ldexp(1.0, f.min_exponent() - f.mantissa_bits);
  std::uniform_real_distribution<double> u(0, 1);
  for (int i = 0; i < 1 << 12; ++i) {
    const double t = u(rng);
    const float sign = (i & 1) ? -1.0f : 1.0f;
    v.push_back(sign * static_cast<float>(std::min(top * (0.25 + t), 3.0e38)));
    v.push_back(sign * static_cast<float>(std::max(tiny * std::exp2(-3 + 12 * t), 1e-45)));
  }
  return v;
}

struct CpuConverted {
  std::vector<std::uint32_t> codes;
  FlagCounts flags;
};

template <class Code>
CpuConverted cpu(std::span<const float> in, const Format& to, const Policy& p, std::uint64_t seed) {
  std::vector<Code> out(in.size());
  CpuConverted c;
  c.flags = convert_batch(in, to, p, std::span<Code>(out), RandomStream{seed, 0});
  c.codes.assign(out.begin(), out.end());
  return c;
}

CpuConverted cpu(std::span<const float> in, const Format& to, const Policy& p, std::uint64_t seed) {
  switch (to.storage_bits) {
    case 8: return cpu<std::uint8_t>(in, to, p, seed);
    case 16: return cpu<std::uint16_t>(in, to, p, seed);
    default: return cpu<std::uint32_t>(in, to, p, seed);
  }
}

// The number of (format, policy) pairs compared.
int compare_all(const Format& f, const std::vector<Policy>& policies) {
  const std::vector<float> in = inputs(f);
  int pairs = 0;
  for (const Policy& p : policies) {
    CAPTURE(f.name);
    const std::string policy = describe(p);
    CAPTURE(policy);
    const std::uint64_t seed = 7;
    const cuda::GpuConverted gpu = cuda::convert_on_gpu(in, f, p, seed);
    const CpuConverted host = cpu(in, f, p, seed);
    std::size_t differ = 0, first = in.size();
    for (std::size_t i = 0; i < in.size(); ++i) {
      if (gpu.codes[i] != host.codes[i]) {
        ++differ;
        if (first == in.size()) first = i;
      }
    }
    CHECK_MESSAGE(differ == 0, differ, " of ", in.size(), " differ; first input ",
                  std::bit_cast<std::uint32_t>(in[first < in.size() ? first : 0]));
    CHECK(gpu.flags.values == host.flags.values);
    CHECK(gpu.flags.count == host.flags.count);
    ++pairs;
  }
  return pairs;
}

std::vector<Policy> policy_grid() {
  std::vector<Policy> grid;
  for (const Rounding r : {Rounding::rne, Rounding::rna, Rounding::rtz, Rounding::rup, Rounding::rdn, Rounding::rto,
                           Rounding::sr, Rounding::sr_rne, Rounding::sr_rna, Rounding::sr_rno}) {
    for (const Overflow o : {Overflow::nosat, Overflow::sat, Overflow::satprop}) {
      for (const Subnormals s : {Subnormals::keep, Subnormals::ftz_daz}) {
        Policy p;
        p.rounding = r;
        p.overflow = o;
        p.subnormals = s;
        p.random_bit_count = is_stochastic(r) ? (o == Overflow::sat ? 8 : 16) : 0;
        p.tininess = s == Subnormals::keep ? Tininess::after : Tininess::before;
        grid.push_back(p);
      }
    }
  }
  for (const NanConvention n : {NanConvention::cuda, NanConvention::canonical, NanConvention::x86, NanConvention::arm,
                                NanConvention::numpy, NanConvention::ml_dtypes, NanConvention::torch}) {
    Policy p;
    p.nan = n;
    grid.push_back(p);
  }
  return grid;
}

}  // namespace

TEST_CASE("the GPU's emulated conversions equal the CPU's, value for value and flag for flag") {
  const std::vector<Policy> grid = policy_grid();
  int pairs = 0;
  for (const Format& f : preset_formats()) {
    if (f.storage_bits <= 32) pairs += compare_all(f, grid);
  }
  for (const Format& f : p3109_formats()) pairs += compare_all(f, grid);
  pairs += compare_all(format_from_string("e6m9"), grid);
  MESSAGE(pairs, " (format, policy) pairs compared");
}
