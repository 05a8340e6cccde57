// Tensor measurements. Every conversion goes through convert_batch (the
// rounding core); everything else here is counting.
#include "fmtcheck/analysis.hpp"

#include <algorithm>
#include <cmath>

#include "fmtcheck/convert.hpp"
#include "fmtcheck/decode.hpp"
#include "fmtcheck/random.hpp"

namespace fmtcheck {
namespace {

// convert_batch into the container width of `f`, widened to 64-bit codes.
FlagCounts convert_to_codes(std::span<const float> in, const Format& f, const Policy& p,
                            std::span<const std::uint32_t> random, std::vector<std::uint64_t>& codes) {
  codes.resize(in.size());
  auto run = [&](auto tag) {
    std::vector<decltype(tag)> out(in.size());
    const FlagCounts counts = convert_batch(in, f, p, std::span(out), random);
    std::copy(out.begin(), out.end(), codes.begin());
    return counts;
  };
  switch (f.storage_bits) {
    case 8: return run(std::uint8_t{});
    case 16: return run(std::uint16_t{});
    case 32: return run(std::uint32_t{});
    default: return run(std::uint64_t{});
  }
}

struct Buffers {
  std::vector<float> scaled;
  std::vector<std::uint64_t> codes;
  std::vector<std::uint32_t> random;
};

// Converts x * scale and adds the outcome to `stats`; `position` is the
// index of x[0] in the tensor (for reproducible stochastic rounding).
void convert_scaled(std::span<const float> x, const Format& f, const Policy& p, float scale, std::uint64_t seed,
                    std::uint64_t position, Buffers& buf, ConversionStats& stats) {
  buf.scaled.resize(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) buf.scaled[i] = x[i] * scale;
  buf.random.clear();
  if (p.rounding == Rounding::sr) {
    const std::uint32_t mask = p.random_bit_count >= 32 ? ~0u : (1u << p.random_bit_count) - 1;
    for (std::size_t i = 0; i < x.size(); ++i) buf.random.push_back(static_cast<std::uint32_t>(splitmix64(seed, position + i)) & mask);
  }
  const FlagCounts flags = convert_to_codes(buf.scaled, f, p, buf.random, buf.codes);
  stats.values += flags.values;
  stats.inexact += flags[Flag::inexact];
  stats.saturated += flags[Flag::saturated];
  stats.underflow_to_zero += flags[Flag::tiny_to_zero];
  stats.subnormal += flags[Flag::subnormal];
  stats.flushed += flags[Flag::flushed];
  stats.nan_produced += flags[Flag::nan_produced];
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double in = x[i];
    const double r = to_double(f, buf.codes[i]);
    const double dequantized = r / scale;
    if (std::isnan(in)) ++stats.nan_in;
    if (std::isinf(in)) ++stats.inf_in;
    if (!std::isfinite(r)) ++stats.nonfinite_out;
    if (std::isfinite(in) && !std::isfinite(r)) ++stats.overflow;
    if (dequantized == in) ++stats.exact;
    if (std::isfinite(in) && std::isfinite(r)) {
      const double abs_error = std::abs(dequantized - in);
      ++stats.error_count;
      stats.max_abs_error = std::max(stats.max_abs_error, abs_error);
      if (in != 0) {
        const double rel = abs_error / std::abs(in);
        ++stats.rel_error_count;
        stats.max_rel_error = std::max(stats.max_rel_error, rel);
        stats.sum_rel_error += rel;
        stats.sum_sq_rel_error += rel * rel;
      }
    }
  }
}

double max_finite(const Format& f) { return to_double(f, f.to_storage(f.max_finite_code())); }

}  // namespace

void InputSummary::add(std::span<const float> x) {
  for (const float v : x) {
    ++values;
    if (std::isnan(v)) {
      ++nan;
    } else if (std::isinf(v)) {
      ++inf;
    } else if (v == 0) {
      ++zero;
    } else {
      amax = std::max(amax, static_cast<double>(std::abs(v)));
      ++binades[std::ilogb(v)];
    }
  }
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

ConversionStats& ConversionStats::operator+=(const ConversionStats& o) {
  values += o.values;
  exact += o.exact;
  inexact += o.inexact;
  overflow += o.overflow;
  saturated += o.saturated;
  underflow_to_zero += o.underflow_to_zero;
  subnormal += o.subnormal;
  flushed += o.flushed;
  nan_in += o.nan_in;
  inf_in += o.inf_in;
  nan_produced += o.nan_produced;
  nonfinite_out += o.nonfinite_out;
  error_count += o.error_count;
  rel_error_count += o.rel_error_count;
  max_abs_error = std::max(max_abs_error, o.max_abs_error);
  max_rel_error = std::max(max_rel_error, o.max_rel_error);
  sum_rel_error += o.sum_rel_error;
  sum_sq_rel_error += o.sum_sq_rel_error;
  return *this;
}

ScaledConversion::ScaledConversion(Format format, Policy policy, float scale, std::uint64_t seed)
    : format_(std::move(format)), policy_(policy), scale_(scale), seed_(seed) {}

void ScaledConversion::add(std::span<const float> x) {
  Buffers buf{std::move(scaled_), std::move(bits_), std::move(random_)};
  convert_scaled(x, format_, policy_, scale_, seed_, position_, buf, stats_);
  position_ += x.size();
  scaled_ = std::move(buf.scaled);
  bits_ = std::move(buf.codes);
  random_ = std::move(buf.random);
}

int block_scale_exponent(double amax, const Format& element, BlockScaleRule rule) {
  if (!(amax > 0) || !std::isfinite(amax)) return 0;
  Policy p;
  p.overflow = Overflow::sat;  // scales beyond E8M0's range clamp to 2^-127 .. 2^127
  // ocp: floor(log2 amax) - emax_elem, i.e. amax * 2^-emax truncated to a
  // power of two; the others round amax / max_elem up or to nearest.
  const bool ocp = rule == BlockScaleRule::ocp;
  const double target = ocp ? std::ldexp(amax, -element.max_exponent()) : amax / max_finite(element);
  p.rounding = ocp ? Rounding::rtz : rule == BlockScaleRule::ceil ? Rounding::rup : Rounding::rne;
  const Conversion scale = convert(target, formats::e8m0, p);
  return std::ilogb(to_double(formats::e8m0, scale.bits));
}

BlockScaledConversion::BlockScaledConversion(Format element, Policy policy, int block, BlockScaleRule rule)
    : element_(std::move(element)), policy_(policy), block_(block), rule_(rule) {}

void BlockScaledConversion::add(std::span<const float> x) {
  Buffers buf;
  for (std::size_t start = 0; start < x.size(); start += static_cast<std::size_t>(block_)) {
    const auto values = x.subspan(start, std::min<std::size_t>(static_cast<std::size_t>(block_), x.size() - start));
    double amax = 0;
    for (const float v : values) {
      if (std::isfinite(v)) amax = std::max(amax, static_cast<double>(std::abs(v)));
    }
    const int k = block_scale_exponent(amax, element_, rule_);
    min_k_ = blocks_ == 0 ? k : std::min(min_k_, k);
    max_k_ = blocks_ == 0 ? k : std::max(max_k_, k);
    convert_scaled(values, element_, policy_, std::ldexp(1.0f, -k), 0, stats_.values, buf, stats_);
    ++blocks_;
  }
}

}  // namespace fmtcheck
