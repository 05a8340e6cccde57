// fmtcheck scale: replays a gradient trace through a scaling recipe and
// converts every scaled gradient bit-exactly, step by step: what the loss
// scale or FP8 scale does, which steps are skipped, what overflows and what
// underflows to zero.
#include <cmath>
#include <cstdio>
#include <map>
#include <regex>

#include "command.hpp"
#include "fmtcheck/analysis.hpp"
#include "fmtcheck/decode.hpp"
#include "fmtcheck/scaling.hpp"
#include "options.hpp"
#include "output_file.hpp"
#include "progress.hpp"
#include "table.hpp"
#include "tensor_options.hpp"
#include "trace_steps.hpp"

namespace fmtcheck::cli {
namespace {

struct ScaleArgs {
  std::string trace;
  std::string recipe = "gradscaler";
  std::string format;  // default: fp16 for gradscaler, hybrid for the FP8 recipes
  PolicyOptions policy;
  bool overflow_given = false;
  GradScalerConfig scaler;
  int history = 1024;
  std::string amax_compute = "max";
  int margin = 0;
  std::string tensors;
  std::string csv;
};

struct StepRow {
  std::uint64_t step;
  std::string tensor;
  float scale;
  bool skipped;
  ConversionStats stats;
  double amax;
};

double max_finite(const Format& f) { return to_double(f, f.to_storage(f.max_finite_code())); }

class Replay {
 public:
  explicit Replay(const ScaleArgs& args) : args_(args) {
    if (args.recipe != "gradscaler" && args.recipe != "delayed" && args.recipe != "current") {
      throw UsageError("bad --recipe '" + args.recipe + "': expected gradscaler, delayed or current");
    }
    const bool fp8 = args.recipe != "gradscaler";
    std::string name = args.format.empty() ? (fp8 ? "hybrid" : "fp16") : args.format;
    // HYBRID is e4m3 forward, e5m2 backward; a trace holds gradients.
    if (name == "hybrid") {
      if (!fp8) throw UsageError("--format hybrid applies to the delayed and current recipes");
      name = "e5m2";
    }
    format_ = parse_format_option(name);
    PolicyOptions policy = args.policy;
    // torch's fp16 gradients overflow to inf (that is what GradScaler detects);
    // Transformer Engine casts to FP8 with saturation.
    if (!args.overflow_given) policy.overflow = fp8 ? "sat" : "nosat";
    policy_ = to_policy(policy);
    if (args.amax_compute != "max" && args.amax_compute != "most_recent") {
      throw UsageError("bad --amax-compute '" + args.amax_compute + "': expected max or most_recent");
    }
    if (args.history < 1) throw UsageError("--history must be at least 1");
    if (args.scaler.growth_interval < 1) throw UsageError("--growth-interval must be at least 1");
    if (args.scaler.hysteresis < 1) throw UsageError("--hysteresis must be at least 1");
    filter_ = tensor_filter(args.tensors);
  }

  void run() {
    const std::vector<TraceStep> steps = list_trace(args_.trace);
    GradScaler scaler(args_.scaler);
    std::map<std::string, DelayedScaling> delayed;
    const auto fp8_max = static_cast<float>(max_finite(format_));
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
          file->for_each_chunk(i, chunk, [&](std::span<const float> x) { input.add(x); });
          float scale = 1.0f;
          if (args_.recipe == "gradscaler") {
            scale = static_cast<float>(scaler.scale());
          } else if (args_.recipe == "current") {
            scale = fp8_scale_from_amax(static_cast<float>(input.amax), fp8_max, args_.margin, 1.0f);
          } else {
            const AmaxCompute compute = args_.amax_compute == "max" ? AmaxCompute::max : AmaxCompute::most_recent;
            scale = delayed.try_emplace(name, fp8_max, args_.history, compute, args_.margin).first->second.scale();
          }
          ScaledConversion conversion(format_, policy_, scale);
          file->for_each_chunk(i, chunk, [&](std::span<const float> x) { conversion.add(x); });
          // TE records the amax of the unscaled tensor, NaN and inf included.
          const float amax = input.nan ? NAN : input.inf ? INFINITY : static_cast<float>(input.amax);
          if (args_.recipe == "delayed") delayed.at(name).update(amax);
          rows.push_back({steps[s].step, name, scale, false, conversion.stats(), amax});
        }
      }
      if (rows.empty()) throw UsageError("trace step " + std::to_string(steps[s].step) + " has no tensors to scale");
      if (args_.recipe == "gradscaler") {
        bool found_inf = false;
        for (const StepRow& r : rows) found_inf = found_inf || r.stats.nonfinite_out > 0;
        const bool skipped = scaler.update(found_inf);
        for (StepRow& r : rows) r.skipped = skipped;
      }
      for (StepRow& r : rows) rows_.push_back(std::move(r));
      progress.update(s + 1);
    }
  }

  void write_csv() const {
    if (args_.csv.empty()) return;
    Table t({"step", "tensor", "scale", "skipped", "values", "overflow", "overflow_fraction", "saturated",
             "underflow_to_zero", "underflow_fraction", "flushed", "subnormal", "amax"});
    for (const StepRow& r : rows_) {
      const double n = static_cast<double>(std::max<std::uint64_t>(r.stats.values, 1));
      t.add_row({std::to_string(r.step), r.tensor, shortest(r.scale), r.skipped ? "1" : "0", std::to_string(r.stats.values),
                 std::to_string(r.stats.overflow), shortest(static_cast<double>(r.stats.overflow) / n),
                 std::to_string(r.stats.saturated), std::to_string(r.stats.underflow_to_zero),
                 shortest(static_cast<double>(r.stats.underflow_to_zero) / n), std::to_string(r.stats.flushed),
                 std::to_string(r.stats.subnormal), shortest(r.amax)});
    }
    OutputFile out(args_.csv);
    out.write(t.csv());
    out.commit();
  }

  void print_summary() const {
    std::printf("recipe %s, %s (%s)\n", args_.recipe.c_str(), format_.name.c_str(), describe(policy_).c_str());
    std::map<std::string, std::tuple<ConversionStats, float, float>> per_tensor;  // stats, min and max scale
    std::map<std::uint64_t, bool> skipped;
    for (const StepRow& r : rows_) {
      auto [it, fresh] = per_tensor.try_emplace(r.tensor, ConversionStats{}, r.scale, r.scale);
      auto& [stats, lo, hi] = it->second;
      stats += r.stats;
      lo = std::min(lo, r.scale);
      hi = std::max(hi, r.scale);
      skipped[r.step] = r.skipped;
    }
    std::uint64_t skipped_steps = 0;
    for (const auto& [step, s] : skipped) skipped_steps += s ? 1 : 0;
    std::printf("steps %zu, skipped %llu, final scale %s\n", skipped.size(), static_cast<unsigned long long>(skipped_steps),
                rows_.empty() ? "-" : shortest(rows_.back().scale).c_str());
    Table table({"tensor", "values", "overflow", "saturated", "underflow", "underflow %", "flushed", "min scale", "max scale"});
    for (const auto& [name, entry] : per_tensor) {
      const auto& [stats, lo, hi] = entry;
      char percent[32];
      std::snprintf(percent, sizeof percent, "%.4g", 100.0 * static_cast<double>(stats.underflow_to_zero) /
                                                           static_cast<double>(std::max<std::uint64_t>(stats.values, 1)));
      table.add_row({name, std::to_string(stats.values), std::to_string(stats.overflow), std::to_string(stats.saturated),
                     std::to_string(stats.underflow_to_zero), percent, std::to_string(stats.flushed), shortest(lo), shortest(hi)});
    }
    std::printf("%s", table.aligned().c_str());
  }

 private:
  static constexpr std::size_t chunk = std::size_t{1} << 16;
  const ScaleArgs& args_;
  Format format_;
  Policy policy_;
  std::optional<std::regex> filter_;
  std::vector<StepRow> rows_;
};

int run_scale(const ScaleArgs& args) {
  Replay replay(args);
  replay.run();
  replay.write_csv();
  replay.print_summary();
  return 0;
}

const bool registered = register_command({
    "scale", "replay a gradient trace through GradScaler, delayed or current FP8 scaling", 75, [](CLI::App& sub) {
      auto args = std::make_shared<ScaleArgs>();
      sub.add_option("TRACE", args->trace, "folder of step_N.npy / step_N.safetensors files, or a manifest listing them")->required();
      sub.add_option("--recipe", args->recipe, "gradscaler (torch), delayed (TE DelayedScaling), current (per-step amax)")
          ->capture_default_str();
      sub.add_option("--format", args->format, "gradient format (default fp16 for gradscaler; hybrid = e5m2 for the FP8 recipes)");
      add_policy_options(sub, args->policy, false);
      sub.add_option("--init-scale", args->scaler.init_scale, "gradscaler: initial scale")->capture_default_str();
      sub.add_option("--growth-factor", args->scaler.growth_factor, "gradscaler: growth factor")->capture_default_str();
      sub.add_option("--backoff-factor", args->scaler.backoff_factor, "gradscaler: backoff factor")->capture_default_str();
      sub.add_option("--growth-interval", args->scaler.growth_interval, "gradscaler: finite steps before growth")->capture_default_str();
      sub.add_option("--hysteresis", args->scaler.hysteresis, "gradscaler: overflowing steps before backoff (Megatron/DeepSpeed)")
          ->capture_default_str();
      sub.add_option("--min-scale", args->scaler.min_scale, "gradscaler: lowest scale (Megatron/DeepSpeed)")->capture_default_str();
      sub.add_flag("--consecutive-hysteresis", args->scaler.consecutive_hysteresis,
                   "gradscaler: a finite step restores the hysteresis budget (DeepSpeed)");
      sub.add_option("--history", args->history, "delayed: amax history length")->capture_default_str();
      sub.add_option("--amax-compute", args->amax_compute, "delayed: max or most_recent")->capture_default_str();
      sub.add_option("--margin", args->margin, "delayed/current: scale = fp8_max / amax / 2^margin")->capture_default_str();
      sub.add_option("--tensors", args->tensors, "only tensors whose name matches this regex");
      sub.add_option("--csv", args->csv, "per-step CSV: step,tensor,scale,skipped,values,overflow,...");
      CLI::App* app = &sub;
      return std::function<int()>([=] {
        args->overflow_given = app->count("--overflow") > 0;
        return run_scale(*args);
      });
    }});

}  // namespace
}  // namespace fmtcheck::cli
