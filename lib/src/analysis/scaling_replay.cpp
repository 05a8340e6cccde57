#include "fmtcheck/analysis/scaling_replay.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <thread>
#include <variant>

#include "fmtcheck/core/decode.hpp"

namespace fmtcheck {
namespace {

constexpr std::size_t chunk = std::size_t{1} << 16;

double max_finite(const Format& f) { return to_double(f, f.to_storage(f.max_finite_code())); }

std::regex regex_option(const std::string& option, const std::string& text) {
  try {
    return std::regex(text);
  } catch (const std::regex_error& e) {
    throw std::invalid_argument("bad " + option + " regex '" + text + "': " + e.what());
  }
}

}  // namespace

ScalingReplay::ScalingReplay(const ReplaySettings& args)
    : settings_(args), threads_(std::max(1u, std::thread::hardware_concurrency())) {
  const auto bad = [](const std::string& message) { throw std::invalid_argument(message); };
  if (args.recipe != "gradscaler" && args.recipe != "deepspeed" && args.recipe != "delayed" && args.recipe != "current") {
    bad("bad --recipe '" + args.recipe + "': expected gradscaler, deepspeed, delayed or current");
  }
  fp8_ = args.recipe == "delayed" || args.recipe == "current";
  const std::string name = args.format.empty() ? (fp8_ ? "hybrid" : "fp16") : args.format;
  // Transformer Engine's Format.HYBRID: e4m3 for the forward pass, e5m2
  // for gradients. A trace holds gradients, so only the tensors `forward`
  // names get e4m3.
  hybrid_ = name == "hybrid";
  if (hybrid_ && !fp8_) bad("--format hybrid applies to the delayed and current recipes");
  if (!args.forward.empty() && !hybrid_) bad("--forward applies to --format hybrid");
  gradient_format_ = format_from_string(hybrid_ ? "e5m2" : name);
  forward_format_ = hybrid_ ? formats::e4m3 : gradient_format_;
  if (!args.forward.empty()) forward_ = regex_option("--forward", args.forward);
  PolicyText policy = args.policy;
  // torch's fp16 gradients overflow to inf (that is what the loss scalers
  // detect); Transformer Engine casts to FP8 with saturation.
  if (!args.overflow_given) policy.overflow = fp8_ ? "sat" : "nosat";
  policy_ = policy_from_text(policy);
  if (args.amax_compute != "max" && args.amax_compute != "most_recent") {
    bad("bad --amax-compute '" + args.amax_compute + "': expected max or most_recent");
  }
  if (args.history < 1) bad("--history must be at least 1");
  if (args.scaler.growth_interval < 1) bad("--growth-interval must be at least 1");
  if (args.deepspeed.scale_window < 1) bad("--scale-window must be at least 1");
  if (args.scaler.hysteresis < 1) bad("--hysteresis must be at least 1");
  if (args.deepspeed.consecutive_hysteresis && args.recipe != "deepspeed") {
    bad("--consecutive-hysteresis is DeepSpeed's: use it with --recipe deepspeed");
  }
  if (args.recipe == "deepspeed") {
    DeepSpeedScalerConfig c = args.deepspeed;
    c.init_scale = args.scaler.init_scale;
    if (args.hysteresis_given) c.hysteresis = args.scaler.hysteresis;
    if (args.min_scale_given) c.min_scale = args.scaler.min_scale;
    deepspeed_ = std::make_unique<DeepSpeedLossScaler>(c);
    scaler_ = deepspeed_.get();
  } else if (args.recipe == "gradscaler") {
    gradscaler_ = std::make_unique<GradScaler>(args.scaler);
    scaler_ = gradscaler_.get();
  }
}

void ScalingReplay::step(std::uint64_t step, const std::vector<StepTensor>& tensors) {
  if (tensors.empty()) throw std::invalid_argument("trace step " + std::to_string(step) + " has no tensors to scale");
  std::vector<ReplayRow> rows;
  for (const StepTensor& t : tensors) {
    // Chunks are measured on every core, each into its own slot, merged in order.
    const std::size_t chunks = static_cast<std::size_t>((t.file->tensors().at(t.index).count + chunk - 1) / chunk);
    std::vector<InputSummary> inputs(chunks);
    t.file->for_each_chunk(t.index, chunk, [&](const TensorChunk& c) {
      std::visit([&](auto x) { inputs[c.first / chunk].add(x); }, c.values);
    }, threads_);
    InputSummary input;
    for (const InputSummary& part : inputs) input += part;
    const Format& format = forward_ && std::regex_search(t.name, *forward_) ? forward_format_ : gradient_format_;
    const auto fp8_max = static_cast<float>(max_finite(format));
    float scale = 1.0f;
    if (scaler_ != nullptr) {
      scale = static_cast<float>(scaler_->scale());
    } else if (settings_.recipe == "current") {
      scale = fp8_scale_from_amax(static_cast<float>(input.amax), fp8_max, settings_.margin, 1.0f);
    } else {
      const AmaxCompute compute = settings_.amax_compute == "max" ? AmaxCompute::max : AmaxCompute::most_recent;
      scale = delayed_.try_emplace(t.name, fp8_max, settings_.history, compute, settings_.margin).first->second.scale();
    }
    const ScaledConversion conversion(format, policy_, scale);
    std::vector<ConversionStats> parts(chunks);
    t.file->for_each_chunk(t.index, chunk, [&](const TensorChunk& c) {
      std::visit([&](auto x) { conversion.measure(x, c.first, parts[c.first / chunk]); }, c.values);
    }, threads_);
    ConversionStats stats;
    for (const ConversionStats& part : parts) stats += part;
    // TE records the amax of the unscaled tensor, NaN and inf included.
    const float amax = input.nan ? NAN : input.inf ? INFINITY : static_cast<float>(input.amax);
    if (settings_.recipe == "delayed") delayed_.at(t.name).update(amax);
    rows.push_back({step, t.name, format.name, scale, false, stats, amax});
  }
  if (scaler_ != nullptr) {
    bool found_inf = false;
    for (const ReplayRow& r : rows) found_inf = found_inf || r.stats.nonfinite_out > 0;
    const bool skipped = scaler_->update(found_inf);
    for (ReplayRow& r : rows) r.skipped = skipped;
  }
  for (ReplayRow& r : rows) rows_.push_back(std::move(r));
}

Record replay_row_record(const ReplayRow& r) {
  const double n = static_cast<double>(std::max<std::uint64_t>(r.stats.values, 1));
  return {{"step", r.step},
          {"tensor", r.tensor},
          {"format", r.format},
          {"scale", r.scale},
          {"skipped", r.skipped},
          {"values", r.stats.values},
          {"overflow", r.stats.overflow},
          {"overflow_fraction", static_cast<double>(r.stats.overflow) / n},
          {"saturated", r.stats.saturated},
          {"underflow_to_zero", r.stats.underflow_to_zero},
          {"underflow_fraction", static_cast<double>(r.stats.underflow_to_zero) / n},
          {"flushed", r.stats.flushed},
          {"subnormal", r.stats.subnormal},
          {"amax", r.amax}};
}

ReplaySummary ScalingReplay::summarize() const {
  ReplaySummary sum;
  std::map<std::uint64_t, bool> skipped;
  for (const ReplayRow& r : rows_) {
    auto [it, fresh] = sum.tensors.try_emplace(r.tensor, ReplaySummary::Tensor{r.format, {}, r.scale, r.scale});
    it->second.stats += r.stats;
    it->second.min_scale = std::min(it->second.min_scale, r.scale);
    it->second.max_scale = std::max(it->second.max_scale, r.scale);
    skipped[r.step] = r.skipped;
  }
  sum.steps = skipped.size();
  for (const auto& [step, s] : skipped) sum.skipped += s ? 1 : 0;
  return sum;
}

std::string ScalingReplay::describe() const {
  const std::string format = hybrid_ ? "hybrid (e4m3 forward, e5m2 gradients)" : gradient_format_.name;
  return "recipe " + settings_.recipe + ", " + format + " (" + fmtcheck::describe(policy_) + ")";
}

std::optional<std::uint64_t> ScalingReplay::overflows_at_min_scale() const {
  if (!deepspeed_) return std::nullopt;
  return deepspeed_->overflows_at_min_scale();
}

Record ScalingReplay::summary_record() const {
  const ReplaySummary sum = summarize();
  Record r{{"recipe", settings_.recipe},
           {"format", format_name()},
           {"policy", fmtcheck::describe(policy_)},
           {"steps", sum.steps},
           {"skipped_steps", sum.skipped},
           {"final_scale", rows_.empty() ? 0.0 : static_cast<double>(rows_.back().scale)}};
  if (const auto at_min = overflows_at_min_scale()) r.emplace_back("overflows_at_min_scale", *at_min);
  return r;
}

std::vector<Record> ScalingReplay::tensor_records() const {
  std::vector<Record> out;
  for (const auto& [name, t] : summarize().tensors) {
    const double n = static_cast<double>(std::max<std::uint64_t>(t.stats.values, 1));
    out.push_back({{"tensor", name},
                   {"format", t.format},
                   {"values", t.stats.values},
                   {"overflow", t.stats.overflow},
                   {"saturated", t.stats.saturated},
                   {"underflow_to_zero", t.stats.underflow_to_zero},
                   {"underflow_fraction", static_cast<double>(t.stats.underflow_to_zero) / n},
                   {"flushed", t.stats.flushed},
                   {"subnormal", t.stats.subnormal},
                   {"min_scale", t.min_scale},
                   {"max_scale", t.max_scale}});
  }
  return out;
}

}  // namespace fmtcheck
