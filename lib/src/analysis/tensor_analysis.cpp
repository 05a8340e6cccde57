#include "fmtcheck/analysis/tensor_analysis.hpp"

#include <charconv>
#include <cmath>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <variant>

#include "fmtcheck/analysis/scaling.hpp"
#include "fmtcheck/core/decode.hpp"

namespace fmtcheck {
namespace {

double max_finite(const Format& f) { return to_double(f, f.to_storage(f.max_finite_code())); }

float scale_for(const ScaleChoice& spec, double amax, const Format& f) {
  switch (spec.kind) {
    case ScaleChoice::Kind::none: return 1.0f;
    case ScaleChoice::Kind::pow2: return std::ldexp(1.0f, spec.n);
    case ScaleChoice::Kind::automatic: return std::ldexp(1.0f, best_pow2_exponent(amax, f).value_or(0));
    case ScaleChoice::Kind::amax:
      return fp8_scale_from_amax(static_cast<float>(amax), static_cast<float>(max_finite(f)), spec.n, 1.0f);
  }
  return 1.0f;
}

// The scale as the shortest decimal that reads back to it.
std::string scale_label(float scale) {
  char text[32];
  const auto end = std::to_chars(text, text + sizeof text, static_cast<double>(scale)).ptr;
  return std::string(text, end);
}

}  // namespace

std::vector<std::pair<std::string, double>> measures_of(const ConversionStats& s, const InputSummary& in) {
  const auto u = [](std::uint64_t v) { return static_cast<double>(v); };
  return {{"values", u(s.values)},
          {"exact", u(s.exact)},
          {"inexact", u(s.inexact)},
          {"overflow", u(s.overflow)},
          {"saturated", u(s.saturated)},
          {"underflow_to_zero", u(s.underflow_to_zero)},
          {"subnormal", u(s.subnormal)},
          {"flushed", u(s.flushed)},
          {"nan_in", u(s.nan_in)},
          {"inf_in", u(s.inf_in)},
          {"nan_produced", u(s.nan_produced)},
          {"max_abs_error", s.max_abs_error},
          {"max_rel_error", s.max_rel_error},
          {"mean_rel_error", s.mean_rel_error()},
          {"rms_rel_error", s.rms_rel_error()},
          {"amax", in.amax}};
}

ScaleChoice parse_scale_choice(std::string_view text) {
  const std::string bad = "bad --scale '" + std::string(text) + "': expected none, auto, amax[:MARGIN] or pow2:N";
  const auto number = [&](std::string_view s) {
    int v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size()) throw std::invalid_argument(bad);
    return v;
  };
  if (text == "none") return {};
  if (text == "auto") return {ScaleChoice::Kind::automatic, 0};
  if (text == "amax") return {ScaleChoice::Kind::amax, 0};
  if (text.starts_with("amax:")) return {ScaleChoice::Kind::amax, number(text.substr(5))};
  if (text.starts_with("pow2:")) {
    const int n = number(text.substr(5));
    if (n < -126 || n > 127) throw std::invalid_argument("--scale pow2:N needs N in [-126, 127] (a normal float32 scale)");
    return {ScaleChoice::Kind::pow2, n};
  }
  throw std::invalid_argument(bad);
}

BlockScaleRule parse_block_scale_rule(std::string_view text) {
  if (text == "ocp") return BlockScaleRule::ocp;
  if (text == "ceil") return BlockScaleRule::ceil;
  if (text == "rne") return BlockScaleRule::rne;
  throw std::invalid_argument("bad --scale-rule '" + std::string(text) + "': expected ocp, ceil or rne");
}

void check_settings(const AnalysisSettings& s) {
  const ScaleChoice scale = parse_scale_choice(s.scale);
  parse_block_scale_rule(s.scale_rule);
  if (s.formats.empty()) throw std::invalid_argument("empty format list ''");
  if (s.block < 0) throw std::invalid_argument("--block must be positive");
  if (s.block > 0 && scale.kind != ScaleChoice::Kind::none) {
    throw std::invalid_argument("--block sets per-block scales; it cannot be combined with --scale " + s.scale);
  }
}

Record block_record(const BlockResult& b, std::uint64_t index, std::uint64_t start) {
  const ConversionStats& s = b.stats;
  return {{"block", index},
          {"start", start},
          {"amax", b.amax},
          {"scale_log2", static_cast<std::int64_t>(b.scale_log2)},
          {"values", s.values},
          {"exact", s.exact},
          {"inexact", s.inexact},
          {"overflow", s.overflow},
          {"saturated", s.saturated},
          {"underflow_to_zero", s.underflow_to_zero},
          {"subnormal", s.subnormal},
          {"max_abs_error", s.max_abs_error},
          {"max_rel_error", s.max_rel_error}};
}

std::vector<std::pair<std::string, std::uint64_t>> histogram_rows(const InputSummary& in) {
  std::vector<std::pair<std::string, std::uint64_t>> rows;
  for (const auto& [b, n] : in.binades()) rows.emplace_back(std::to_string(b), n);
  rows.emplace_back("zero", in.zero);
  rows.emplace_back("infinite", in.inf);
  rows.emplace_back("not_a_number", in.nan);
  return rows;
}

TensorAnalysis analyze_passes(const TensorPass& pass, const AnalysisSettings& settings) {
  check_settings(settings);
  const ScaleChoice scale = parse_scale_choice(settings.scale);
  const BlockScaleRule rule = parse_block_scale_rule(settings.scale_rule);
  const std::vector<Format>& formats = settings.formats;
  const Policy& policy = settings.policy;
  const bool keep_blocks = settings.keep_blocks && settings.block > 0;

  // Each format's conversions and what the passes measured of them.
  struct PerFormat {
    std::optional<ScaledConversion> scaled;
    std::optional<BlockScaledConversion> blocked;
    std::optional<ScaledConversion> at_best;      // only when it differs from `scaled`; flags only
    std::optional<std::uint64_t> best_underflow;  // read off the input summary instead of at_best
    std::optional<int> best;
    ConversionStats scaled_stats, best_stats;
    BlockTotals block_totals;
    std::vector<BlockResult> block_results;
  };
  std::vector<PerFormat> per_format(formats.size());
  // Asks a pass for every main conversion (`scaled` or `blocked`) and takes its results back.
  const auto ask_main = [&](TensorPass::Request& r) {
    for (const PerFormat& p : per_format) {
      if (p.scaled) r.measure.push_back(&*p.scaled);
      if (p.blocked) r.blocks.push_back(&*p.blocked);
    }
    r.keep_blocks = keep_blocks;
  };
  const auto take_main = [&](TensorPass::Result& r) {
    std::size_t m = 0, b = 0;
    for (PerFormat& p : per_format) {
      if (p.scaled) p.scaled_stats = r.measured[m++];
      if (p.blocked) {
        p.block_totals = r.block_totals[b];
        if (keep_blocks) p.block_results = std::move(r.block_results[b]);
        ++b;
      }
    }
  };

  // Pass 1: the input summary, and the conversions whose scale does not
  // depend on the tensor's amax.
  const bool scale_needs_amax = scale.kind == ScaleChoice::Kind::automatic || scale.kind == ScaleChoice::Kind::amax;
  if (!scale_needs_amax) {
    for (std::size_t f = 0; f < formats.size(); ++f) {
      if (settings.block > 0) {
        per_format[f].blocked.emplace(formats[f], policy, settings.block, rule);
      } else {
        per_format[f].scaled.emplace(formats[f], policy, scale_for(scale, 0, formats[f]), settings.seed);
      }
    }
  }
  TensorAnalysis out;
  {
    TensorPass::Request first;
    first.summary = true;
    if (!scale_needs_amax) ask_main(first);
    TensorPass::Result r = pass.run(first);
    out.input = std::move(r.summary);
    if (!scale_needs_amax) take_main(r);
  }
  const InputSummary& input = out.input;

  // Pass 2: what needs the amax: its scale, and the underflow at the best
  // power of two where the input summary cannot tell it.
  TensorPass::Request second;
  for (std::size_t f = 0; f < formats.size(); ++f) {
    PerFormat& p = per_format[f];
    p.best = best_pow2_exponent(input.amax, formats[f]);
    if (scale_needs_amax) p.scaled.emplace(formats[f], policy, scale_for(scale, input.amax, formats[f]), settings.seed);
    if (p.best && (!p.scaled || p.scaled->scale() != std::ldexp(1.0f, *p.best))) {
      p.best_underflow = underflow_at_pow2_scale(input, formats[f], policy, *p.best, pass.as_double);
      if (!p.best_underflow) {
        p.at_best.emplace(formats[f], policy, std::ldexp(1.0f, *p.best), settings.seed);
        second.count_flags.push_back(&*p.at_best);
      }
    }
  }
  if (scale_needs_amax) ask_main(second);
  if (!second.count_flags.empty() || scale_needs_amax) {
    TensorPass::Result r = pass.run(second);
    if (scale_needs_amax) take_main(r);
    std::size_t c = 0;
    for (PerFormat& p : per_format) {
      if (p.at_best) p.best_stats = r.counted[c++];
    }
  }

  for (std::size_t f = 0; f < formats.size(); ++f) {
    PerFormat& p = per_format[f];
    const ConversionStats& stats = p.scaled ? p.scaled_stats : p.block_totals.stats;
    FormatAnalysis r{formats[f], "", measures_of(stats, input), std::move(p.block_results), stats, p.best, 0};
    if (p.scaled) {
      r.scale = scale_label(p.scaled->scale());
    } else {
      r.scale = "block" + std::to_string(settings.block) + ":" + settings.scale_rule;
      r.measures.emplace_back("blocks", static_cast<double>(p.block_totals.blocks));
      r.measures.emplace_back("min_block_scale_log2", p.block_totals.min_scale_log2);
      r.measures.emplace_back("max_block_scale_log2", p.block_totals.max_scale_log2);
    }
    if (p.best) {
      const ConversionStats& at_best = p.at_best ? p.best_stats : p.scaled_stats;
      const std::uint64_t underflow = p.best_underflow.value_or(at_best.underflow_to_zero);
      r.underflow_at_best = underflow;
      r.measures.emplace_back("best_pow2_scale", std::ldexp(1.0, *p.best));
      r.measures.emplace_back("underflow_at_best_pow2_scale",
                              input.values ? static_cast<double>(underflow) / static_cast<double>(input.values) : 0.0);
    }
    out.formats.push_back(std::move(r));
  }
  return out;
}

TensorAnalysis analyze_tensor(const TensorFile& file, std::size_t index, const AnalysisSettings& settings,
                              const std::function<void(std::uint64_t)>& progressed) {
  check_settings(settings);
  const unsigned threads = settings.threads != 0 ? settings.threads : std::max(1u, std::thread::hardware_concurrency());
  const TensorInfo& info = file.tensors().at(index);
  // Whole blocks per chunk, so that the blocks are those of the tensor.
  const std::size_t block = settings.block > 0 ? static_cast<std::size_t>(settings.block) : 1;
  const std::size_t chunk = ((std::size_t{1} << 20) + block - 1) / block * block;
  const std::size_t chunks = static_cast<std::size_t>((info.count + chunk - 1) / chunk);
  std::size_t passes = 0;

  // One read of the file's chunks on `threads` threads: each chunk's
  // measurements in its own slot, merged in chunk order, so the result does
  // not depend on the threads.
  TensorPass pass;
  pass.count = info.count;
  pass.as_double = info.as_double;
  pass.run = [&](const TensorPass::Request& request) {
    struct Slot {
      std::vector<ConversionStats> measured, counted;
      std::vector<BlockTotals> block_totals;
      std::vector<std::vector<BlockResult>> block_results;
    };
    std::vector<Slot> slots(chunks);
    TensorPass::Result result;
    std::mutex mutex;  // guards result.summary
    file.for_each_chunk(index, chunk, [&](const TensorChunk& c) {
      Slot& slot = slots[static_cast<std::size_t>(c.first / chunk)];
      slot.measured.resize(request.measure.size());
      slot.counted.resize(request.count_flags.size());
      slot.block_totals.resize(request.blocks.size());
      slot.block_results.resize(request.keep_blocks ? request.blocks.size() : 0);
      std::visit([&](auto x) {
        for (std::size_t i = 0; i < request.measure.size(); ++i) request.measure[i]->measure(x, c.first, slot.measured[i]);
        for (std::size_t i = 0; i < request.count_flags.size(); ++i) {
          request.count_flags[i]->count_flags(x, c.first, slot.counted[i]);
        }
        for (std::size_t i = 0; i < request.blocks.size(); ++i) {
          request.blocks[i]->measure(x, c.first, slot.block_totals[i],
                                     request.keep_blocks ? &slot.block_results[i] : nullptr);
        }
        if (request.summary) {
          InputSummary part;
          part.add(x);
          const std::lock_guard lock(mutex);
          result.summary += part;
        }
      }, c.values);
      if (progressed) progressed(c.size());
    }, threads);
    result.measured.resize(request.measure.size());
    result.counted.resize(request.count_flags.size());
    result.block_totals.resize(request.blocks.size());
    result.block_results.resize(request.keep_blocks ? request.blocks.size() : 0);
    for (const Slot& slot : slots) {
      for (std::size_t i = 0; i < slot.measured.size(); ++i) result.measured[i] += slot.measured[i];
      for (std::size_t i = 0; i < slot.counted.size(); ++i) result.counted[i] += slot.counted[i];
      for (std::size_t i = 0; i < slot.block_totals.size(); ++i) result.block_totals[i] += slot.block_totals[i];
      for (std::size_t i = 0; i < slot.block_results.size(); ++i) {
        result.block_results[i].insert(result.block_results[i].end(), slot.block_results[i].begin(),
                                       slot.block_results[i].end());
      }
    }
    ++passes;
    return result;
  };
  TensorAnalysis out = analyze_passes(pass, settings);
  if (passes == 1 && progressed) progressed(info.count);  // the second read it did not need
  return out;
}

}  // namespace fmtcheck
