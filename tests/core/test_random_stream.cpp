// Stochastic rounding's counter-based draws (RandomStream): the generator
// against SplitMix64's published reference outputs, and batches converted
// with a stream against the core value by value, whole and in pieces. The
// kernel's share is proven on every float32 input in tests/batch.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "fmtcheck/batch/convert_batch.hpp"
#include "fmtcheck/core/convert.hpp"
#include "fmtcheck/core/random.hpp"

using namespace fmtcheck;

TEST_CASE("splitmix64(seed, i) is output i of the reference SplitMix64 generator") {
  // Rosetta Code, "Pseudo-random numbers/Splitmix64": seed 1234567.
  const std::uint64_t reference[] = {6457827717110365317ull, 3203168211198807973ull, 9817491932198370423ull,
                                     4593380528125082431ull, 16408922859458223821ull};
  for (std::uint64_t i = 0; i < 5; ++i) CHECK(splitmix64(1234567, i) == reference[i]);
}

TEST_CASE("RandomStream position q draws one half of splitmix64(seed, q / 2): low for even q, high for odd") {
  const std::uint64_t third = 9817491932198370423ull;  // reference output 2 for seed 1234567
  const RandomStream stream{1234567, 3};
  CHECK(stream.draw(1) == static_cast<std::uint32_t>(third));
  CHECK(stream.draw(2) == static_cast<std::uint32_t>(third >> 32));
}

namespace {

// Values of every magnitude the formats care about, both signs, with
// subnormals, zeros, infinities and NaNs mixed in.
std::vector<float> mixed_inputs(std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t r = splitmix64(99, i);
    v[i] = i % 5 == 0 ? std::bit_cast<float>(static_cast<std::uint32_t>(r))
                      : std::ldexp(1.0f + static_cast<float>(r & 0xFFFFFF) * 0x1p-24f,
                                   static_cast<int>((r >> 32) % 48) - 30) * ((r >> 40) & 1 ? -1.0f : 1.0f);
  }
  return v;
}

template <typename Out>
void check_against_core(const Format& f, int bits) {
  CAPTURE(f.name);
  CAPTURE(bits);
  const Policy p{.rounding = Rounding::sr, .random_bit_count = bits};
  const std::vector<float> in = mixed_inputs(1000);
  const RandomStream stream{7, 1000001};  // odd: the kernel starts one value later
  std::vector<Out> whole(in.size()), pieces(in.size());
  const FlagCounts counts = convert_batch(in, f, p, std::span<Out>(whole), stream);
  // The same values in two pieces, the second one first: same draws.
  const std::size_t cut = 333;
  FlagCounts piece_counts = convert_batch(std::span(in).subspan(cut), f, p, std::span<Out>(pieces).subspan(cut),
                                          RandomStream{7, 1000001 + cut});
  piece_counts += convert_batch(std::span(in).first(cut), f, p, std::span<Out>(pieces).first(cut), stream);
  FlagCounts core_counts;
  std::size_t differ = 0;
  for (std::size_t i = 0; i < in.size(); ++i) {
    Policy q = p;
    q.random_bits = stream.draw(i);
    const Conversion c = convert(in[i], f, q);
    core_counts.add(c.flags);
    differ += whole[i] != c.bits || pieces[i] != c.bits;
  }
  CHECK(differ == 0);
  CHECK(counts.count == core_counts.count);
  CHECK(piece_counts.count == core_counts.count);
}

}  // namespace

TEST_CASE("convert_batch with a RandomStream == the core with the stream's draws, whole or in pieces") {
  for (const int bits : {1, 3, 8, 13, 16, 24, 32}) {
    check_against_core<std::uint16_t>(formats::fp16, bits);
    check_against_core<std::uint16_t>(formats::bf16, bits);
    check_against_core<std::uint8_t>(formats::e4m3, bits);
    check_against_core<std::uint8_t>(formats::e5m2, bits);
    check_against_core<std::uint8_t>(formats::e2m1, bits);
  }
}

TEST_CASE("a RandomStream changes nothing outside stochastic rounding") {
  const std::vector<float> in = mixed_inputs(256);
  std::vector<std::uint8_t> with(in.size()), without(in.size());
  const FlagCounts a = convert_batch(in, formats::e4m3, Policy{}, std::span<std::uint8_t>(with), RandomStream{1, 2});
  const FlagCounts b = convert_batch(in, formats::e4m3, Policy{}, std::span<std::uint8_t>(without));
  CHECK(with == without);
  CHECK(a.count == b.count);
}
