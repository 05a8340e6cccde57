// Tensor measurements. Every conversion goes through the library core
// (convert_batch for float32 input, convert for float64); everything else
// here is counting, written so that the per-value loops stay branch-light.
#include "fmtcheck/analysis/analysis.hpp"
#include "fmtcheck/batch/convert_batch.hpp"
#include "fmtcheck/batch/decode_batch.hpp"
#include "fmtcheck/core/convert.hpp"
#include "fmtcheck/core/decode.hpp"
#include "fmtcheck/core/random.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "batch/decode_fast.hpp"

namespace fmtcheck {
namespace {

double max_finite(const Format& f) { return to_double(f, f.to_storage(f.max_finite_code())); }

// Per-thread buffers, reused from chunk to chunk.
struct Scratch {
  std::vector<float> scaled32;
  std::vector<double> scaled64;
  std::vector<unsigned char> codes;  // container codes, storage_bits / 8 bytes each
};
thread_local Scratch scratch;

template <typename Code>
std::span<Code> code_buffer(std::size_t n) {
  scratch.codes.resize(n * sizeof(Code));
  return {reinterpret_cast<Code*>(scratch.codes.data()), n};
}

// x * scale converted to `f` into `codes`: float32 in float32 through
// convert_batch (and its SIMD fast paths), float64 in float64 value by value.
template <typename Code>
FlagCounts convert_scaled(std::span<const float> x, const Format& f, const Policy& p, float scale, std::uint64_t seed,
                          std::uint64_t first, std::span<Code> codes) {
  std::span<const float> in = x;
  if (scale != 1.0f) {
    scratch.scaled32.resize(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) scratch.scaled32[i] = x[i] * scale;
    in = scratch.scaled32;
  }
  return convert_batch(in, f, p, codes, RandomStream{seed, first});
}

template <typename Code>
FlagCounts convert_scaled(std::span<const double> x, const Format& f, const Policy& p, float scale, std::uint64_t seed,
                          std::uint64_t first, std::span<Code> codes) {
  const RandomStream draws{seed, first};
  FlagCounts counts;
  const Rounder round(f, p);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const Conversion c = round(unpack(x[i] * static_cast<double>(scale)),
                               is_stochastic(p.rounding) ? draws.draw(i) : p.random_bits);
    codes[i] = static_cast<Code>(c.bits);
    counts.add(c.flags);
  }
  return counts;
}

// The error measures of one run of values, over inputs and results both
// widened to double: four independent lanes of every count, maximum and
// sum, so the loop runs on vector registers (GCC vector extensions; an AVX2
// and an AVX-512 clone where the CPU has them). The lanes are combined in a
// fixed order, so results do not depend on the number of threads.
using Lanes = double __attribute__((vector_size(32)));
using LaneMask = long long __attribute__((vector_size(32)));

struct ErrorLanes {
  LaneMask nan_in{}, inf_in{}, nonfinite_out{}, overflow{}, exact{}, error_count{}, rel_count{};
  Lanes max_abs{}, max_rel{}, sum{}, sum_sq{};
};

// Four values of a buffer as doubles: float buffers are widened here, in
// registers, which costs less than storing and reloading them as doubles.
// (An out parameter: a vector return value draws GCC's ABI warning on the
// default target, though these are always inlined.)
using Floats = float __attribute__((vector_size(16)));
[[gnu::always_inline]] inline void load_lanes(const float* p, Lanes& out) {
  Floats v;
  std::memcpy(&v, p, sizeof v);
  out = __builtin_convertvector(v, Lanes);
}
[[gnu::always_inline]] inline void load_lanes(const double* p, Lanes& out) { std::memcpy(&out, p, sizeof out); }

// n (a multiple of 4) inputs `in` and results `r`, both float or both double.
template <typename B>
[[gnu::always_inline]] inline void error_lanes(const B* in, const B* r, std::size_t n, double scale, bool pow2,
                                               ErrorLanes& lanes) {
  // A copy in registers: the caller's could alias `in` and `r` as far as the
  // compiler knows, so it stored every lane back on every step.
  ErrorLanes e = lanes;
  const double inverse = 1.0 / scale;  // exact for a power of two
  const LaneMask magnitude = {0x7fffffffffffffffLL, 0x7fffffffffffffffLL, 0x7fffffffffffffffLL, 0x7fffffffffffffffLL};
  const double inf = INFINITY;
  for (std::size_t i = 0; i < n; i += 4) {
    Lanes x, y;
    load_lanes(in + i, x);
    load_lanes(r + i, y);
    const Lanes dequantized = pow2 ? y * inverse : y / scale;
    const Lanes ax = reinterpret_cast<Lanes>(reinterpret_cast<LaneMask>(x) & magnitude);
    const Lanes ay = reinterpret_cast<Lanes>(reinterpret_cast<LaneMask>(y) & magnitude);
    const LaneMask x_finite = ax < inf;
    const LaneMask y_finite = ay < inf;
    e.nan_in -= x != x;
    e.inf_in -= ax == inf;
    e.nonfinite_out -= ~y_finite;
    e.overflow -= x_finite & ~y_finite;
    e.exact -= dequantized == x;
    const LaneMask measured = x_finite & y_finite;
    const LaneMask relative = measured & (x != 0);
    const Lanes diff = dequantized - x;
    const Lanes abs_error = reinterpret_cast<Lanes>(reinterpret_cast<LaneMask>(diff) & magnitude & measured);
    const Lanes rel = reinterpret_cast<Lanes>(reinterpret_cast<LaneMask>(abs_error / ax) & relative);
    e.error_count -= measured;
    e.rel_count -= relative;
    e.max_abs = abs_error > e.max_abs ? abs_error : e.max_abs;
    e.max_rel = rel > e.max_rel ? rel : e.max_rel;
    e.sum += rel;
    e.sum_sq += rel * rel;
  }
  lanes = e;
}

#define FMTCHECK_ERROR_LANES_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
FMTCHECK_ERROR_LANES_CLONES
void add_error_lanes(const float* in, const float* r, std::size_t n, double scale, bool pow2, ErrorLanes& lanes) {
  error_lanes(in, r, n, scale, pow2, lanes);
}
FMTCHECK_ERROR_LANES_CLONES
void add_error_lanes(const double* in, const double* r, std::size_t n, double scale, bool pow2, ErrorLanes& lanes) {
  error_lanes(in, r, n, scale, pow2, lanes);
}
#undef FMTCHECK_ERROR_LANES_CLONES

// The errors of results `codes` against inputs x, in blocks that stay in
// the L1 cache, held in buffers of B: float where the inputs are float32
// and float32 holds every result (half the bytes of doubles, widened in
// registers), else double. The last block is padded to whole lanes with
// zeros, which add nothing but one exact, measured value each; those are
// taken back. Results that decode_batch decodes without a table (fp16 and
// bf16 in SIMD, tf32 and fp32 as float32 bits; exact, proven on every code)
// are decoded by it block by block: a table of fp16's 65536 values as
// doubles (512 KiB) does not stay in cache. Other formats of at most 16
// bits decode through `decoded`, such a table (2 KiB for 8 bits); the rest
// value by value.
template <typename B, typename T, typename Code>
void add_errors_in(std::span<const T> x, std::span<const Code> codes, const Format& f,
                   const std::vector<double>* decoded, float scale, ConversionStats& stats) {
  constexpr std::size_t block = 2048;
  const double s = scale;
  const bool pow2 = s == std::ldexp(1.0, std::ilogb(s));
  alignas(32) B in[block];
  alignas(32) B r[block];
  alignas(32) float r32[block];
  const bool by_batch = decoded == nullptr && detail::decodes_without_table(f);
  ErrorLanes e;
  std::uint64_t padding = 0;
  for (std::size_t start = 0; start < x.size(); start += block) {
    const std::size_t n = std::min(block, x.size() - start);
    // Separate loops: the copies vectorize, the table lookups run without a branch.
    for (std::size_t i = 0; i < n; ++i) in[i] = static_cast<B>(x[start + i]);
    if (decoded != nullptr) {
      const double* table = decoded->data();
      for (std::size_t i = 0; i < n; ++i) r[i] = static_cast<B>(table[codes[start + i]]);
    } else if (by_batch) {
      if constexpr (sizeof(Code) <= 4 && std::is_same_v<B, float>) {
        decode_batch(codes.subspan(start, n), f, std::span<float>(r, n));
      } else if constexpr (sizeof(Code) <= 4) {
        decode_batch(codes.subspan(start, n), f, std::span<float>(r32, n));
        for (std::size_t i = 0; i < n; ++i) r[i] = r32[i];
      }
    } else {
      for (std::size_t i = 0; i < n; ++i) r[i] = static_cast<B>(to_double(f, codes[start + i]));
    }
    const std::size_t padded = (n + 3) / 4 * 4;
    for (std::size_t i = n; i < padded; ++i) in[i] = r[i] = 0;  // 0 == 0 / scale: counted exact, no error
    padding += padded - n;
    add_error_lanes(in, r, padded, s, pow2, e);
  }
  // By reference: a 32-byte vector passed by value draws g++'s -Wpsabi note.
  const auto total = [](const LaneMask& v) { return static_cast<std::uint64_t>(v[0] + v[1] + v[2] + v[3]); };
  ValueErrors sum;
  sum.nan_in = total(e.nan_in);
  sum.inf_in = total(e.inf_in);
  sum.nonfinite_out = total(e.nonfinite_out);
  sum.overflow = total(e.overflow);
  sum.exact = total(e.exact) - padding;
  sum.error_count = total(e.error_count) - padding;
  sum.rel_error_count = total(e.rel_count);
  sum.max_abs_error = std::max({e.max_abs[0], e.max_abs[1], e.max_abs[2], e.max_abs[3]});
  sum.max_rel_error = std::max({e.max_rel[0], e.max_rel[1], e.max_rel[2], e.max_rel[3]});
  sum.sum_rel_error = (e.sum[0] + e.sum[1]) + (e.sum[2] + e.sum[3]);
  sum.sum_sq_rel_error = (e.sum_sq[0] + e.sum_sq[1]) + (e.sum_sq[2] + e.sum_sq[3]);
  stats.add(sum);
}

template <typename T, typename Code>
void add_errors(std::span<const T> x, std::span<const Code> codes, const Format& f, const std::vector<double>* decoded,
                float scale, ConversionStats& stats) {
  if constexpr (std::is_same_v<T, float>) {
    if (float32_holds(f)) {
      return add_errors_in<float>(x, codes, f, decoded, scale, stats);
    }
  }
  add_errors_in<double>(x, codes, f, decoded, scale, stats);
}

// Converts x * scale and adds the outcome (with the errors when `errors`).
template <typename T>
void measure_scaled(std::span<const T> x, std::uint64_t first, const Format& f, const Policy& p, float scale,
                    std::uint64_t seed, const std::vector<double>* decoded, bool errors, ConversionStats& stats) {
  const auto run = [&](auto code) {
    using Code = decltype(code);
    const std::span<Code> codes = code_buffer<Code>(x.size());
    stats.add(convert_scaled(x, f, p, scale, seed, first, codes));
    if (errors) add_errors<T, Code>(x, codes, f, decoded, scale, stats);
  };
  switch (f.storage_bits) {
    case 8: return run(std::uint8_t{});
    case 16: return run(std::uint16_t{});
    case 32: return run(std::uint32_t{});
    default: return run(std::uint64_t{});
  }
}

std::shared_ptr<const std::vector<double>> decode_table(const Format& f) {
  if (f.storage_bits > 16 || detail::decodes_without_table(f)) return nullptr;
  auto table = std::make_shared<std::vector<double>>(std::size_t{1} << f.storage_bits);
  for (std::size_t code = 0; code < table->size(); ++code) (*table)[code] = to_double(f, code);
  return table;
}

// One pass over float32 or float64 values: specials, amax and the binade
// histogram, all from the bits (finite magnitudes order as their bits).
// Values are counted by exponent field, with no branch for normal ones, in
// four interleaved tables: in real tensors neighbours share a binade, and
// one table would make each count wait for the previous one's store. Each
// entry holds two counts, so that a value costs one store: the values in
// its low half, those without fraction bits in its high half (a call's
// count fits in 32 bits; longer spans are split). Field 0 is zero or
// subnormal (subnormals, rare, take a branch to their binade); the top
// field is infinity (no fraction bits) or NaN.
template <typename Real, typename Bits, int Mantissa, int Bias>
void add_values(InputSummary& s, std::span<const Real> x) {
  constexpr Bits magnitude_mask = ~Bits{0} >> 1;
  constexpr Bits fraction_mask = (Bits{1} << Mantissa) - 1;
  constexpr Bits inf_bits = magnitude_mask & ~fraction_mask;
  constexpr std::size_t fields = std::size_t{1} << (sizeof(Bits) * 8 - 1 - Mantissa);
  constexpr std::size_t tables = 4;
  if (x.size() > 0xFFFFFFFFu) {
    add_values<Real, Bits, Mantissa, Bias>(s, x.first(x.size() / 2));
    return add_values<Real, Bits, Mantissa, Bias>(s, x.subspan(x.size() / 2));
  }
  std::vector<std::uint64_t> counts(tables * fields);  // values | values without fraction bits << 32
  std::uint64_t subnormal = 0;
  Bits amax_bits = std::bit_cast<Bits>(static_cast<Real>(s.amax));
  for (std::size_t i = 0; i < x.size(); ++i) {
    const Bits m = std::bit_cast<Bits>(x[i]) & magnitude_mask;
    const std::size_t slot = (i % tables) * fields + static_cast<std::size_t>(m >> Mantissa);
    counts[slot] += 1 + (std::uint64_t{(m & fraction_mask) == 0} << 32);
    amax_bits = std::max(amax_bits, m < inf_bits ? m : Bits{0});
    if (m <= fraction_mask && m != 0) [[unlikely]] {
      const auto b = static_cast<std::size_t>(detail::binade_of<Bits, Mantissa, Bias>(m) - InputSummary::min_binade);
      ++s.binade_count[b];
      s.power_of_two_count[b] += detail::is_power_of_two<Bits, Mantissa>(m);
      ++subnormal;
    }
  }
  for (std::size_t field = 0; field < fields; ++field) {
    std::uint64_t n = 0, powers = 0;
    for (std::size_t t = 0; t < tables; ++t) {
      n += counts[t * fields + field] & 0xFFFFFFFFu;
      powers += counts[t * fields + field] >> 32;
    }
    if (field == 0) {
      s.zero += n - subnormal;
    } else if (field == fields - 1) {
      s.inf += powers;
      s.nan += n - powers;
    } else {
      const auto b = static_cast<std::size_t>(static_cast<int>(field) - Bias - InputSummary::min_binade);
      s.binade_count[b] += n;
      s.power_of_two_count[b] += powers;
    }
  }
  s.values += x.size();
  s.amax = std::max(s.amax, static_cast<double>(std::bit_cast<Real>(amax_bits)));
}

}  // namespace

void InputSummary::add(std::span<const float> x) { add_values<float, std::uint32_t, 23, 127>(*this, x); }
void InputSummary::add(std::span<const double> x) { add_values<double, std::uint64_t, 52, 1023>(*this, x); }

InputSummary& InputSummary::operator+=(const InputSummary& o) {
  values += o.values;
  nan += o.nan;
  inf += o.inf;
  zero += o.zero;
  amax = std::max(amax, o.amax);
  for (std::size_t b = 0; b < binade_count.size(); ++b) {
    binade_count[b] += o.binade_count[b];
    power_of_two_count[b] += o.power_of_two_count[b];
  }
  return *this;
}

std::uint64_t InputSummary::at_most_power_of_two(int e) const {
  if (e < min_binade) return 0;
  if (e > max_binade) return values - zero - nan - inf;
  const auto top = static_cast<std::size_t>(e - min_binade);
  std::uint64_t n = power_of_two_count[top];
  for (std::size_t b = 0; b < top; ++b) n += binade_count[b];
  return n;
}

std::optional<std::uint64_t> underflow_at_pow2_scale(const InputSummary& in, const Format& f, const Policy& p, int k,
                                                     bool float64_input) {
  if (p.rounding != Rounding::rne || p.subnormals != Subnormals::keep || !f.has_subnormals || f.mantissa_bits == 0) {
    return std::nullopt;
  }
  const int half_min_subnormal = f.min_exponent() - f.mantissa_bits - 1;
  // The product x * 2^k in the input's precision: exact unless it falls
  // below that precision's normal range, where it rounds (to zero at or
  // below half its smallest subnormal, 2^-150 or 2^-1075).
  const int lowest_normal = float64_input ? -1022 : -126;
  const int zero_product = float64_input ? -1075 : -150;
  if (k < 0 && half_min_subnormal < lowest_normal) return std::nullopt;
  const std::uint64_t tiny = in.at_most_power_of_two(half_min_subnormal - k);
  return k < 0 ? tiny - in.at_most_power_of_two(zero_product - k) : tiny;
}

std::map<int, std::uint64_t> InputSummary::binades() const {
  std::map<int, std::uint64_t> out;
  for (std::size_t b = 0; b < binade_count.size(); ++b) {
    if (binade_count[b] != 0) out[static_cast<int>(b) + min_binade] = binade_count[b];
  }
  return out;
}

std::optional<int> best_pow2_exponent(double amax, const Format& f) {
  if (!(amax > 0) || !std::isfinite(amax)) return std::nullopt;
  const double limit = max_finite(f);
  int k = std::ilogb(limit) - std::ilogb(amax);
  while (std::ldexp(amax, k) > limit) --k;
  while (std::ldexp(amax, k + 1) <= limit) ++k;
  return std::clamp(k, -126, 127);
}

double ConversionStats::mean_rel_error() const {
  return rel_error_count == 0 ? 0.0 : sum_rel_error / static_cast<double>(rel_error_count);
}
double ConversionStats::rms_rel_error() const {
  return rel_error_count == 0 ? 0.0 : std::sqrt(sum_sq_rel_error / static_cast<double>(rel_error_count));
}

void ConversionStats::add(const FlagCounts& flags) {
  values += flags.values;
  inexact += flags[Flag::inexact];
  saturated += flags[Flag::saturated];
  underflow_to_zero += flags[Flag::tiny_to_zero];
  subnormal += flags[Flag::subnormal];
  flushed += flags[Flag::flushed];
  nan_produced += flags[Flag::nan_produced];
}

void ConversionStats::add(const ValueErrors& e) {
  nan_in += e.nan_in;
  inf_in += e.inf_in;
  nonfinite_out += e.nonfinite_out;
  overflow += e.overflow;
  exact += e.exact;
  error_count += e.error_count;
  rel_error_count += e.rel_error_count;
  max_abs_error = std::max(max_abs_error, e.max_abs_error);
  max_rel_error = std::max(max_rel_error, e.max_rel_error);
  sum_rel_error += e.sum_rel_error;
  sum_sq_rel_error += e.sum_sq_rel_error;
}

ConversionStats& ConversionStats::operator+=(const ConversionStats& o) {
  // The flag counts, then the errors.
  values += o.values;
  inexact += o.inexact;
  saturated += o.saturated;
  underflow_to_zero += o.underflow_to_zero;
  subnormal += o.subnormal;
  flushed += o.flushed;
  nan_produced += o.nan_produced;
  add(ValueErrors{o.nan_in, o.inf_in, o.nonfinite_out, o.overflow, o.exact, o.error_count, o.rel_error_count,
                  o.max_abs_error, o.max_rel_error, o.sum_rel_error, o.sum_sq_rel_error});
  return *this;
}

ScaledConversion::ScaledConversion(Format format, Policy policy, float scale, std::uint64_t seed)
    : format_(std::move(format)), policy_(policy), scale_(scale), seed_(seed), decoded_(decode_table(format_)) {}

template <typename T>
void ScaledConversion::run(std::span<const T> x, std::uint64_t first, ConversionStats& stats, bool errors) const {
  measure_scaled(x, first, format_, policy_, scale_, seed_, decoded_.get(), errors, stats);
}

void ScaledConversion::measure(std::span<const float> x, std::uint64_t first, ConversionStats& stats) const { run(x, first, stats, true); }
void ScaledConversion::measure(std::span<const double> x, std::uint64_t first, ConversionStats& stats) const { run(x, first, stats, true); }
void ScaledConversion::count_flags(std::span<const float> x, std::uint64_t first, ConversionStats& stats) const { run(x, first, stats, false); }
void ScaledConversion::count_flags(std::span<const double> x, std::uint64_t first, ConversionStats& stats) const { run(x, first, stats, false); }

int block_scale_exponent(double amax, const Format& element, BlockScaleRule rule) {
  return block_scale_exponent(amax, element.max_exponent(), max_finite(element), rule);
}

void BlockTotals::add(const BlockResult& b) {
  min_scale_log2 = blocks == 0 ? b.scale_log2 : std::min(min_scale_log2, b.scale_log2);
  max_scale_log2 = blocks == 0 ? b.scale_log2 : std::max(max_scale_log2, b.scale_log2);
  stats += b.stats;
  ++blocks;
}

BlockTotals& BlockTotals::operator+=(const BlockTotals& o) {
  if (o.blocks == 0) return *this;
  min_scale_log2 = blocks == 0 ? o.min_scale_log2 : std::min(min_scale_log2, o.min_scale_log2);
  max_scale_log2 = blocks == 0 ? o.max_scale_log2 : std::max(max_scale_log2, o.max_scale_log2);
  stats += o.stats;
  blocks += o.blocks;
  return *this;
}

BlockScaledConversion::BlockScaledConversion(Format element, Policy policy, int block, BlockScaleRule rule)
    : element_(std::move(element)), policy_(policy), block_(block), rule_(rule), decoded_(decode_table(element_)) {}

template <typename T>
void BlockScaledConversion::run(std::span<const T> x, std::uint64_t first, BlockTotals& totals,
                                std::vector<BlockResult>* blocks) const {
  for (std::size_t start = 0; start < x.size(); start += static_cast<std::size_t>(block_)) {
    const auto values = x.subspan(start, std::min<std::size_t>(static_cast<std::size_t>(block_), x.size() - start));
    BlockResult b;
    for (const T v : values) {
      if (std::isfinite(v)) b.amax = std::max(b.amax, static_cast<double>(std::abs(v)));
    }
    b.scale_log2 = block_scale_exponent(b.amax, element_, rule_);
    measure_scaled(values, first + start, element_, policy_, std::ldexp(1.0f, -b.scale_log2), 0, decoded_.get(), true,
                   b.stats);
    totals.add(b);
    if (blocks != nullptr) blocks->push_back(b);
  }
}

void BlockScaledConversion::measure(std::span<const float> x, std::uint64_t first, BlockTotals& totals,
                                    std::vector<BlockResult>* blocks) const {
  run(x, first, totals, blocks);
}
void BlockScaledConversion::measure(std::span<const double> x, std::uint64_t first, BlockTotals& totals,
                                    std::vector<BlockResult>* blocks) const {
  run(x, first, totals, blocks);
}

}  // namespace fmtcheck
