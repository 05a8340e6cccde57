// fmtcheck scale: replays a gradient trace from disk through a scaling
// recipe (the library's ScalingReplay) and converts every scaled gradient
// bit-exactly, step by step: what the loss scale or FP8 scale does, which
// steps are skipped, what overflows and what underflows to zero.
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>

#include "common/command.hpp"
#include "common/record_output.hpp"
#include "common/options.hpp"
#include "common/output_file.hpp"
#include "common/progress.hpp"
#include "common/table.hpp"
#include "common/tensor_options.hpp"
#include "common/trace_steps.hpp"
#include "fmtcheck/analysis/scaling_replay.hpp"

namespace fmtcheck::cli {
namespace {

struct ScaleArgs {
  std::string trace;
  ReplaySettings replay;
  std::string tensors;
  std::string csv, json;
};

class Replay {
 public:
  explicit Replay(const ScaleArgs& args) : args_(args), replay_(args.replay), filter_(tensor_filter(args.tensors)) {}

  void run() {
    const std::vector<TraceStep> steps = list_trace(args_.trace);
    Progress progress("scale", steps.size());
    for (std::size_t s = 0; s < steps.size(); ++s) {
      std::vector<std::unique_ptr<TensorFile>> files;
      std::vector<ScalingReplay::StepTensor> tensors;
      for (const std::string& path : steps[s].files) {
        files.push_back(open_tensors(path, {}));
        for (std::size_t i = 0; i < files.back()->tensors().size(); ++i) {
          const std::string name = trace_tensor_name(path, files.back()->tensors()[i].name);
          if (!filter_ || std::regex_search(name, *filter_)) tensors.push_back({name, files.back().get(), i});
        }
      }
      replay_.step(steps[s].step, tensors);
      progress.update(s + 1);
    }
  }

  void write_csv() const {
    if (args_.csv.empty()) return;
    Table t(field_names(replay_row_record({})));
    for (const ReplayRow& r : replay_.rows()) t.add_row(to_cells(replay_row_record(r)));
    OutputFile out(args_.csv);
    out.write(t.csv());
    out.commit();
  }

  void write_json() const {
    if (args_.json.empty()) return;
    nlohmann::ordered_json out = to_json(replay_.summary_record());
    out["tensors"] = nlohmann::ordered_json::array();
    for (const Record& t : replay_.tensor_records()) out["tensors"].push_back(to_json(t));
    OutputFile file(args_.json);
    file.write(out.dump(2) + "\n");
    file.commit();
  }

  void print_summary() const {
    const ReplaySummary sum = replay_.summarize();
    const std::vector<ReplayRow>& rows = replay_.rows();
    std::printf("%s\n", replay_.describe().c_str());
    std::printf("steps %llu, skipped %llu, final scale %s\n", static_cast<unsigned long long>(sum.steps),
                static_cast<unsigned long long>(sum.skipped), rows.empty() ? "-" : shortest(rows.back().scale).c_str());
    if (const auto at_min = replay_.overflows_at_min_scale(); at_min && *at_min > 0) {
      std::printf("note: %llu overflow(s) at the minimum scale, where DeepSpeed stops the run (raise_error_at_min_scale)\n",
                  static_cast<unsigned long long>(*at_min));
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
      if (replay_.recipe() == "gradscaler" || replay_.recipe() == "deepspeed") {  // the loss scalers skip steps
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
  const ScaleArgs& args_;
  ScalingReplay replay_;
  std::optional<std::regex> filter_;
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
      sub.add_option("--recipe", args->replay.recipe,
                     "gradscaler (torch, Megatron), deepspeed (DynamicLossScaler), delayed (TE DelayedScaling), current (per-step amax)")
          ->capture_default_str();
      sub.add_option("--format", args->replay.format,
                     "gradient format (default fp16 for the loss scalers; hybrid for the FP8 recipes: e5m2 gradients, e4m3 --forward tensors)");
      sub.add_option("--forward", args->replay.forward, "hybrid: regex of the tensors that belong to the forward pass (converted to e4m3)");
      add_policy_options(sub, args->replay.policy, false);
      sub.add_option("--init-scale", args->replay.scaler.init_scale, "gradscaler, deepspeed: initial scale")->capture_default_str();
      sub.add_option("--growth-factor", args->replay.scaler.growth_factor, "gradscaler: growth factor")->capture_default_str();
      sub.add_option("--backoff-factor", args->replay.scaler.backoff_factor, "gradscaler: backoff factor")->capture_default_str();
      sub.add_option("--growth-interval", args->replay.scaler.growth_interval, "gradscaler: finite steps before growth")->capture_default_str();
      sub.add_option("--scale-window", args->replay.deepspeed.scale_window, "deepspeed: loss_scale_window")->capture_default_str();
      sub.add_option("--hysteresis", args->replay.scaler.hysteresis,
                     "overflowing steps before backoff (gradscaler: Megatron's, default 1 = torch; deepspeed: default 2)");
      sub.add_option("--min-scale", args->replay.scaler.min_scale, "lowest scale (gradscaler: Megatron's, default none; deepspeed: default 1)");
      sub.add_flag("--consecutive-hysteresis", args->replay.deepspeed.consecutive_hysteresis,
                   "deepspeed: a finite step restores the hysteresis budget");
      sub.add_option("--history", args->replay.history, "delayed: amax history length")->capture_default_str();
      sub.add_option("--amax-compute", args->replay.amax_compute, "delayed: max or most_recent")->capture_default_str();
      sub.add_option("--margin", args->replay.margin, "delayed/current: scale = fp8_max / amax / 2^margin")->capture_default_str();
      sub.add_option("--tensors", args->tensors, "only tensors whose name matches this regex");
      sub.add_option("--csv", args->csv, "per-step CSV: step,tensor,format,scale,skipped,values,overflow,...");
      sub.add_option("--json", args->json, "summary as JSON: steps, skipped steps, final scale, per-tensor totals");
      CLI::App* app = &sub;
      return std::function<int()>([=] {
        args->replay.overflow_given = app->count("--overflow") > 0;
        args->replay.hysteresis_given = app->count("--hysteresis") > 0;
        args->replay.min_scale_given = app->count("--min-scale") > 0;
        return run_scale(*args);
      });
    }});

}  // namespace
}  // namespace fmtcheck::cli
