// fmtcheck scale: replays a gradient trace through a scaling recipe and
// converts every scaled gradient bit-exactly, step by step: what the loss
// scale or FP8 scale does, which steps are skipped, what overflows and what
// underflows to zero.
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>

#include "common/command.hpp"
#include "common/options.hpp"
#include "common/output_file.hpp"
#include "common/progress.hpp"
#include "common/table.hpp"
#include "common/tensor_options.hpp"
#include "common/trace_steps.hpp"
#include "fmtcheck/analysis/analysis.hpp"
#include "fmtcheck/analysis/scaling.hpp"
#include "fmtcheck/core/decode.hpp"

namespace fmtcheck::cli {
namespace {

struct ScaleArgs {
  std::string trace;
  std::string recipe = "gradscaler";
  std::string format;  // default: fp16 for the loss scalers, hybrid for the FP8 recipes
  std::string forward;  // hybrid: tensors of the forward pass (e4m3); the rest are gradients (e5m2)
  PolicyOptions policy;
  bool overflow_given = false;
  GradScalerConfig scaler;
  DeepSpeedScalerConfig deepspeed;
  bool hysteresis_given = false, min_scale_given = false;
  int history = 1024;
  std::string amax_compute = "max";
  int margin = 0;
  std::string tensors;
  std::string csv, json;
};

struct StepRow {
  std::uint64_t step;
  std::string tensor;
  std::string format;
  float scale;
  bool skipped;
  ConversionStats stats;
  double amax;
};

double max_finite(const Format& f) { return to_double(f, f.to_storage(f.max_finite_code())); }

class Replay {
 public:
  explicit Replay(const ScaleArgs& args) : args_(args) {
    if (args.recipe != "gradscaler" && args.recipe != "deepspeed" && args.recipe != "delayed" && args.recipe != "current") {
      throw UsageError("bad --recipe '" + args.recipe + "': expected gradscaler, deepspeed, delayed or current");
    }
    fp8_ = args.recipe == "delayed" || args.recipe == "current";
    const std::string name = args.format.empty() ? (fp8_ ? "hybrid" : "fp16") : args.format;
    // Transformer Engine's Format.HYBRID: e4m3 for the forward pass, e5m2
    // for gradients. A trace holds gradients, so only the tensors --forward
    // names get e4m3.
    hybrid_ = name == "hybrid";
    if (hybrid_ && !fp8_) throw UsageError("--format hybrid applies to the delayed and current recipes");
    if (!args.forward.empty() && !hybrid_) throw UsageError("--forward applies to --format hybrid");
    gradient_format_ = parse_format_option(hybrid_ ? "e5m2" : name);
    forward_format_ = hybrid_ ? formats::e4m3 : gradient_format_;
    forward_ = tensor_filter(args.forward);
    PolicyOptions policy = args.policy;
    // torch's fp16 gradients overflow to inf (that is what the loss scalers
    // detect); Transformer Engine casts to FP8 with saturation.
    if (!args.overflow_given) policy.overflow = fp8_ ? "sat" : "nosat";
    policy_ = to_policy(policy);
    if (args.amax_compute != "max" && args.amax_compute != "most_recent") {
      throw UsageError("bad --amax-compute '" + args.amax_compute + "': expected max or most_recent");
    }
    if (args.history < 1) throw UsageError("--history must be at least 1");
    if (args.scaler.growth_interval < 1) throw UsageError("--growth-interval must be at least 1");
    if (args.deepspeed.scale_window < 1) throw UsageError("--scale-window must be at least 1");
    if (args.scaler.hysteresis < 1) throw UsageError("--hysteresis must be at least 1");
    if (args.deepspeed.consecutive_hysteresis && args.recipe != "deepspeed") {
      throw UsageError("--consecutive-hysteresis is DeepSpeed's: use it with --recipe deepspeed");
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
    filter_ = tensor_filter(args.tensors);
  }

  void run() {
    const std::vector<TraceStep> steps = list_trace(args_.trace);
    std::map<std::string, DelayedScaling> delayed;
    Progress progress("scale", steps.size());
    for (std::size_t s = 0; s < steps.size(); ++s) {
      std::vector<StepRow> rows;
      for (const std::string& path : steps[s].files) {
        const auto file = open_tensors(path, {});
        for (std::size_t i = 0; i < file->tensors().size(); ++i) {
          const TensorInfo& info = file->tensors()[i];
          const std::string name = trace_tensor_name(path, info.name);
          if (filter_ && !std::regex_search(name, *filter_)) continue;
          InputSummary input;
          file->for_each_chunk(i, chunk, [&](const TensorChunk& c) { std::visit([&](auto x) { input.add(x); }, c.values); });
          const Format& format = forward_ && std::regex_search(name, *forward_) ? forward_format_ : gradient_format_;
          const auto fp8_max = static_cast<float>(max_finite(format));
          float scale = 1.0f;
          if (scaler_ != nullptr) {
            scale = static_cast<float>(scaler_->scale());
          } else if (args_.recipe == "current") {
            scale = fp8_scale_from_amax(static_cast<float>(input.amax), fp8_max, args_.margin, 1.0f);
          } else {
            const AmaxCompute compute = args_.amax_compute == "max" ? AmaxCompute::max : AmaxCompute::most_recent;
            scale = delayed.try_emplace(name, fp8_max, args_.history, compute, args_.margin).first->second.scale();
          }
          const ScaledConversion conversion(format, policy_, scale);
          ConversionStats stats;
          file->for_each_chunk(i, chunk, [&](const TensorChunk& c) {
            std::visit([&](auto x) { conversion.measure(x, c.first, stats); }, c.values);
          });
          // TE records the amax of the unscaled tensor, NaN and inf included.
          const float amax = input.nan ? NAN : input.inf ? INFINITY : static_cast<float>(input.amax);
          if (args_.recipe == "delayed") delayed.at(name).update(amax);
          rows.push_back({steps[s].step, name, format.name, scale, false, stats, amax});
        }
      }
      if (rows.empty()) throw UsageError("trace step " + std::to_string(steps[s].step) + " has no tensors to scale");
      if (scaler_ != nullptr) {
        bool found_inf = false;
        for (const StepRow& r : rows) found_inf = found_inf || r.stats.nonfinite_out > 0;
        const bool skipped = scaler_->update(found_inf);
        for (StepRow& r : rows) r.skipped = skipped;
      }
      for (StepRow& r : rows) rows_.push_back(std::move(r));
      progress.update(s + 1);
    }
  }

  void write_csv() const {
    if (args_.csv.empty()) return;
    Table t({"step", "tensor", "format", "scale", "skipped", "values", "overflow", "overflow_fraction", "saturated",
             "underflow_to_zero", "underflow_fraction", "flushed", "subnormal", "amax"});
    for (const StepRow& r : rows_) {
      const double n = static_cast<double>(std::max<std::uint64_t>(r.stats.values, 1));
      t.add_row({std::to_string(r.step), r.tensor, r.format, shortest(r.scale), r.skipped ? "1" : "0", std::to_string(r.stats.values),
                 std::to_string(r.stats.overflow), shortest(static_cast<double>(r.stats.overflow) / n),
                 std::to_string(r.stats.saturated), std::to_string(r.stats.underflow_to_zero),
                 shortest(static_cast<double>(r.stats.underflow_to_zero) / n), std::to_string(r.stats.flushed),
                 std::to_string(r.stats.subnormal), shortest(r.amax)});
    }
    OutputFile out(args_.csv);
    out.write(t.csv());
    out.commit();
  }

  // What a run comes to, per tensor and over the whole trace.
  struct Summary {
    struct Tensor {
      std::string format;
      ConversionStats stats;
      float min_scale = 0, max_scale = 0;
    };
    std::map<std::string, Tensor> tensors;
    std::uint64_t steps = 0, skipped = 0;
  };

  Summary summarize() const {
    Summary sum;
    std::map<std::uint64_t, bool> skipped;
    for (const StepRow& r : rows_) {
      auto [it, fresh] = sum.tensors.try_emplace(r.tensor, Summary::Tensor{r.format, {}, r.scale, r.scale});
      it->second.stats += r.stats;
      it->second.min_scale = std::min(it->second.min_scale, r.scale);
      it->second.max_scale = std::max(it->second.max_scale, r.scale);
      skipped[r.step] = r.skipped;
    }
    sum.steps = skipped.size();
    for (const auto& [step, s] : skipped) sum.skipped += s ? 1 : 0;
    return sum;
  }

  std::string policy_line() const {
    const std::string format = hybrid_ ? "hybrid (e4m3 forward, e5m2 gradients)" : gradient_format_.name;
    return "recipe " + args_.recipe + ", " + format + " (" + describe(policy_) + ")";
  }

  void write_json() const {
    if (args_.json.empty()) return;
    const Summary sum = summarize();
    nlohmann::ordered_json out;
    out["recipe"] = args_.recipe;
    out["format"] = hybrid_ ? "hybrid" : gradient_format_.name;
    out["policy"] = describe(policy_);
    out["steps"] = sum.steps;
    out["skipped_steps"] = sum.skipped;
    out["final_scale"] = rows_.empty() ? 0.0 : static_cast<double>(rows_.back().scale);
    if (deepspeed_) out["overflows_at_min_scale"] = deepspeed_->overflows_at_min_scale();
    out["tensors"] = nlohmann::ordered_json::array();
    for (const auto& [name, t] : sum.tensors) {
      const double n = static_cast<double>(std::max<std::uint64_t>(t.stats.values, 1));
      out["tensors"].push_back({{"tensor", name},
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
    OutputFile file(args_.json);
    file.write(out.dump(2) + "\n");
    file.commit();
  }

  void print_summary() const {
    const Summary sum = summarize();
    std::printf("%s\n", policy_line().c_str());
    std::printf("steps %llu, skipped %llu, final scale %s\n", static_cast<unsigned long long>(sum.steps),
                static_cast<unsigned long long>(sum.skipped), rows_.empty() ? "-" : shortest(rows_.back().scale).c_str());
    if (deepspeed_ && deepspeed_->overflows_at_min_scale() > 0) {
      std::printf("note: %llu overflow(s) at the minimum scale, where DeepSpeed stops the run (raise_error_at_min_scale)\n",
                  static_cast<unsigned long long>(deepspeed_->overflows_at_min_scale()));
    }
    Table table({"tensor", "format", "values", "overflow", "saturated", "underflow to zero", "flushed", "min scale",
                 "max scale"});
    std::map<std::string, ConversionStats> per_format;
    for (const auto& [name, t] : sum.tensors) {
      table.add_row({name, t.format, std::to_string(t.stats.values), std::to_string(t.stats.overflow),
                     std::to_string(t.stats.saturated), share(t.stats.underflow_to_zero, t.stats.values),
                     std::to_string(t.stats.flushed), compact(t.min_scale), compact(t.max_scale)});
      per_format[t.format] += t.stats;
    }
    table.shorten_to_fit(0, terminal_width);
    std::printf("%s\nverdict:\n", table.aligned().c_str());
    // Per format, what the recipe left over the whole run.
    std::size_t label = 0;
    for (const auto& [format, stats] : per_format) label = std::max(label, format.size());
    for (const auto& [format, stats] : per_format) {
      std::string text = "over ";
      text += std::to_string(sum.steps);
      text += " steps: ";
      if (stats.overflow + stats.saturated == 0) text += "nothing overflows";
      if (stats.overflow > 0) text += share(stats.overflow, stats.values) + " overflow";
      if (stats.saturated > 0) text += (stats.overflow > 0 ? ", " : "") + share(stats.saturated, stats.values) + " saturate";
      text += ", ";
      text += stats.underflow_to_zero == 0 ? "nothing underflows"
                                           : share(stats.underflow_to_zero, stats.values) + " underflow";
      text += " to zero";
      if (scaler_ != nullptr) {
        text += "; ";
        text += std::to_string(sum.skipped);
        text += sum.skipped == 1 ? " step" : " steps";
        text += " skipped for an overflow";
      }
      text += ".";
      std::printf("%s", wrap(format + std::string(label + 2 - format.size(), ' '), text, terminal_width).c_str());
    }
  }

 private:
  static constexpr std::size_t chunk = std::size_t{1} << 16;
  const ScaleArgs& args_;
  bool fp8_ = false, hybrid_ = false;
  Format gradient_format_, forward_format_;
  std::optional<std::regex> forward_;
  Policy policy_;
  std::unique_ptr<GradScaler> gradscaler_;
  std::unique_ptr<DeepSpeedLossScaler> deepspeed_;
  LossScaler* scaler_ = nullptr;  // the loss-scaling recipes; null for the FP8 ones
  std::optional<std::regex> filter_;
  std::vector<StepRow> rows_;
};

int run_scale(const ScaleArgs& args) {
  Replay replay(args);
  replay.run();
  replay.write_csv();
  replay.write_json();
  replay.print_summary();
  return 0;
}

const bool registered = register_command({
    "scale", "replay a gradient trace through GradScaler, delayed or current FP8 scaling", 75, [](CLI::App& sub) {
      auto args = std::make_shared<ScaleArgs>();
      sub.add_option("TRACE", args->trace, "folder of step_N.npy / step_N.safetensors files, or a manifest listing them")->required();
      sub.add_option("--recipe", args->recipe,
                     "gradscaler (torch, Megatron), deepspeed (DynamicLossScaler), delayed (TE DelayedScaling), current (per-step amax)")
          ->capture_default_str();
      sub.add_option("--format", args->format,
                     "gradient format (default fp16 for the loss scalers; hybrid for the FP8 recipes: e5m2 gradients, e4m3 --forward tensors)");
      sub.add_option("--forward", args->forward, "hybrid: regex of the tensors that belong to the forward pass (converted to e4m3)");
      add_policy_options(sub, args->policy, false);
      sub.add_option("--init-scale", args->scaler.init_scale, "gradscaler, deepspeed: initial scale")->capture_default_str();
      sub.add_option("--growth-factor", args->scaler.growth_factor, "gradscaler: growth factor")->capture_default_str();
      sub.add_option("--backoff-factor", args->scaler.backoff_factor, "gradscaler: backoff factor")->capture_default_str();
      sub.add_option("--growth-interval", args->scaler.growth_interval, "gradscaler: finite steps before growth")->capture_default_str();
      sub.add_option("--scale-window", args->deepspeed.scale_window, "deepspeed: loss_scale_window")->capture_default_str();
      sub.add_option("--hysteresis", args->scaler.hysteresis,
                     "overflowing steps before backoff (gradscaler: Megatron's, default 1 = torch; deepspeed: default 2)");
      sub.add_option("--min-scale", args->scaler.min_scale, "lowest scale (gradscaler: Megatron's, default none; deepspeed: default 1)");
      sub.add_flag("--consecutive-hysteresis", args->deepspeed.consecutive_hysteresis,
                   "deepspeed: a finite step restores the hysteresis budget");
      sub.add_option("--history", args->history, "delayed: amax history length")->capture_default_str();
      sub.add_option("--amax-compute", args->amax_compute, "delayed: max or most_recent")->capture_default_str();
      sub.add_option("--margin", args->margin, "delayed/current: scale = fp8_max / amax / 2^margin")->capture_default_str();
      sub.add_option("--tensors", args->tensors, "only tensors whose name matches this regex");
      sub.add_option("--csv", args->csv, "per-step CSV: step,tensor,format,scale,skipped,values,overflow,...");
      sub.add_option("--json", args->json, "summary as JSON: steps, skipped steps, final scale, per-tensor totals");
      CLI::App* app = &sub;
      return std::function<int()>([=] {
        args->overflow_given = app->count("--overflow") > 0;
        args->hysteresis_given = app->count("--hysteresis") > 0;
        args->min_scale_given = app->count("--min-scale") > 0;
        return run_scale(*args);
      });
    }});

}  // namespace
}  // namespace fmtcheck::cli
