// analyze over arrays in memory, and scaling recipes replayed over steps of
// gradient arrays: the library's analyze_tensor and ScalingReplay over
// memory_tensors(), so the arrays are read in place.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>
#include <nanobind/ndarray.h>

#include <array>
#include <cmath>

#include "arrays.hpp"
#include "bindings.hpp"
#include "fmtcheck/analysis/report_text.hpp"
#include "fmtcheck/analysis/scaling_replay.hpp"
#include "fmtcheck/analysis/tensor_analysis.hpp"
#include "fmtcheck/analysis/verdict.hpp"
#include "fmtcheck/core/format.hpp"
#include "gpu.hpp"

#if defined(FMTCHECK_HAS_CUDA)
#include "fmtcheck/cuda/emulated_analysis.hpp"
#endif

namespace fmtcheck::python {
namespace {

// Named arrays, each with the format of its codes (None for float arrays).
struct NamedArrays {
  std::vector<std::string> names;
  std::vector<Array> arrays;
  std::vector<std::optional<std::string>> froms;

  std::unique_ptr<TensorFile> tensors() const {
    std::vector<MemoryTensor> list;
    for (std::size_t i = 0; i < arrays.size(); ++i) list.push_back(memory_tensor(names[i], arrays[i], froms[i]));
    return memory_tensors("<memory>", list);
  }
};

// A TensorOutcome as plain Python data, so that outcomes can be kept, merged and pickled (a
// distributed run's ranks) without holding extension objects: (format, block_scaled, best exponent
// or None, underflow at the best scale, the 14 counts and 4 error sums of ConversionStats).
std::array<std::uint64_t ConversionStats::*, 14> stats_counts() {
  return {&ConversionStats::values,    &ConversionStats::exact,         &ConversionStats::inexact,
          &ConversionStats::overflow,  &ConversionStats::saturated,     &ConversionStats::underflow_to_zero,
          &ConversionStats::subnormal, &ConversionStats::flushed,       &ConversionStats::nan_in,
          &ConversionStats::inf_in,    &ConversionStats::nan_produced,  &ConversionStats::nonfinite_out,
          &ConversionStats::error_count, &ConversionStats::rel_error_count};
}
std::array<double ConversionStats::*, 4> stats_sums() {
  return {&ConversionStats::max_abs_error, &ConversionStats::max_rel_error, &ConversionStats::sum_rel_error,
          &ConversionStats::sum_sq_rel_error};
}

nb::tuple outcome_tuple(const TensorOutcome& o) {
  nb::list counts, sums;
  for (const auto field : stats_counts()) counts.append(o.stats.*field);
  for (const auto field : stats_sums()) sums.append(o.stats.*field);
  return nb::make_tuple(o.format, o.block_scaled, o.best, o.underflow_at_best, nb::tuple(counts), nb::tuple(sums));
}

TensorOutcome outcome_from(const nb::handle& h) {
  const auto t = nb::cast<nb::tuple>(h);
  if (t.size() != 6) throw nb::type_error("an outcome is the 6-tuple fmtcheck.analyze returns");
  TensorOutcome o{nb::cast<std::string>(t[0]), {}, nb::cast<bool>(t[1]), nb::cast<std::optional<int>>(t[2]),
                  nb::cast<std::uint64_t>(t[3])};
  const auto counts = nb::cast<nb::tuple>(t[4]);
  const auto sums = nb::cast<nb::tuple>(t[5]);
  if (counts.size() != 14 || sums.size() != 4) throw nb::type_error("an outcome holds 14 counts and 4 error sums");
  for (std::size_t i = 0; i < 14; ++i) o.stats.*stats_counts()[i] = nb::cast<std::uint64_t>(counts[i]);
  for (std::size_t i = 0; i < 4; ++i) o.stats.*stats_sums()[i] = nb::cast<double>(sums[i]);
  return o;
}

// What analyze and gpu_analyze return: the measures, histograms, blocks and outcomes of each tensor.
nb::dict analysis_dict(const std::vector<std::string>& names, const std::vector<TensorAnalysis>& analyses,
                       const AnalysisSettings& settings) {
  const int block = settings.block;
  const std::string& scale_rule = settings.scale_rule;
  nb::list results, histograms, block_rows, outcomes;
  for (std::size_t i = 0; i < analyses.size(); ++i) {
    const std::string& tensor = names[i];
    for (const FormatAnalysis& f : analyses[i].formats) {
      nb::dict r;
      r["tensor"] = tensor;
      r["format"] = f.format.name;
      r["scale"] = f.scale;
      nb::dict measures;
      for (const auto& [name, value] : f.measures) measures[name.c_str()] = value;
      r["measures"] = measures;
      results.append(r);
      outcomes.append(outcome_tuple(TensorOutcome{f.format.name, f.stats, block > 0, f.best, f.underflow_at_best}));
      for (std::size_t b = 0; b < f.blocks.size(); ++b) {
        nb::dict row;
        row["tensor"] = tensor;
        row["format"] = f.format.name;
        row["scale_rule"] = scale_rule;
        row.update(record_dict(block_record(f.blocks[b], b, b * static_cast<std::uint64_t>(block))));
        block_rows.append(row);
      }
    }
    nb::dict h;
    h["tensor"] = tensor;
    nb::dict binades;
    for (const auto& [b, n] : histogram_rows(analyses[i].input)) binades[b.c_str()] = n;
    h["binades"] = binades;
    histograms.append(h);
  }
  nb::dict out;
  out["policy"] = describe(settings.policy);
  out["results"] = results;
  out["histograms"] = histograms;
  out["blocks"] = block_rows;
  out["outcomes"] = outcomes;
  out["scale"] = applied_scale(settings.scale, block, scale_rule);
  return out;
}

AnalysisSettings settings_of(const std::string& formats, const std::string& scale, int block,
                             const std::string& scale_rule, bool blocks, const PolicyText& policy, std::uint64_t seed,
                             unsigned threads) {
  AnalysisSettings settings{format_list_from_string(formats), policy_from_text(policy), seed, scale, block, scale_rule,
                            blocks, threads};
  check_settings(settings);
  return settings;
}

nb::dict analyze(const NamedArrays& in, const std::string& formats, const std::string& scale, int block,
                 const std::string& scale_rule, bool blocks, const std::string& round, const std::string& overflow,
                 const std::string& subnormals, const std::string& tininess, const std::string& nan, int sr_bits,
                 std::uint64_t seed, unsigned threads) {
  const AnalysisSettings settings = settings_of(formats, scale, block, scale_rule, blocks,
                                                policy_text(round, overflow, subnormals, tininess, nan, sr_bits), seed,
                                                threads);
  const auto file = in.tensors();
  std::vector<TensorAnalysis> analyses;
  {
    nb::gil_scoped_release unlocked;
    for (std::size_t i = 0; i < file->tensors().size(); ++i) analyses.push_back(analyze_tensor(*file, i, settings));
  }
  return analysis_dict(in.names, analyses, settings);
}

// The same for float32 arrays in GPU memory, measured there (emulated_analysis.hpp).
nb::dict gpu_analyze(const std::vector<std::string>& names, const std::vector<CudaArray>& arrays,
                     const std::string& formats, const std::string& scale, int block, const std::string& scale_rule,
                     bool blocks, const std::string& round, const std::string& overflow, const std::string& subnormals,
                     const std::string& tininess, const std::string& nan, int sr_bits, std::uint64_t seed) {
  const AnalysisSettings settings = settings_of(formats, scale, block, scale_rule, blocks,
                                                policy_text(round, overflow, subnormals, tininess, nan, sr_bits), seed,
                                                0);
  for (const CudaArray& a : arrays) {
    if (a.dtype() != nb::dtype<float>()) throw nb::type_error("analyze on the GPU takes float32 arrays");
  }
  std::vector<TensorAnalysis> analyses;
  for (const CudaArray& a : arrays) {
    use_gpu(a.device_id());
#if defined(FMTCHECK_HAS_CUDA)
    nb::gil_scoped_release unlocked;
    analyses.push_back(cuda::analyze_on_gpu(static_cast<const float*>(a.data()), a.size(), settings));
#endif
  }
  return analysis_dict(names, analyses, settings);
}

// A ScalingReplay that owns the arrays of the step it is replaying.
class Replay {
 public:
  explicit Replay(const ReplaySettings& s) : replay_(s) {}

  void step(std::uint64_t step, const NamedArrays& in) {
    const auto file = in.tensors();
    std::vector<ScalingReplay::StepTensor> tensors;
    for (std::size_t i = 0; i < in.names.size(); ++i) tensors.push_back({in.names[i], file.get(), i});
    nb::gil_scoped_release unlocked;
    replay_.step(step, tensors);
  }

  nb::list rows() const {
    nb::list out;
    for (const ReplayRow& r : replay_.rows()) out.append(record_dict(replay_row_record(r)));
    return out;
  }

  // The summary of `fmtcheck scale --json`.
  nb::dict summary() const {
    nb::dict out = record_dict(replay_.summary_record());
    nb::list tensors;
    for (const Record& t : replay_.tensor_records()) tensors.append(record_dict(t));
    out["tensors"] = tensors;
    return out;
  }

 private:
  ScalingReplay replay_;
};

}  // namespace

void bind_analysis(nb::module_& m) {
  m.def(
      "verdict",
      [](const nb::list& outcomes, const std::string& formats, const std::string& scale, std::size_t width) {
        std::vector<TensorOutcome> list;
        for (const nb::handle h : outcomes) list.push_back(outcome_from(h));
        return verdict(list, format_list_from_string(formats), scale, width);
      }, default_fp,
      nb::arg("outcomes"), nb::arg("formats"), nb::arg("scale"), nb::arg("width") = 100,
      "The closing verdict of `fmtcheck analyze` over the outcomes analyze returned, one paragraph per format.");
  m.def("wrap", &wrap, nb::arg("lead"), nb::arg("text"), nb::arg("width") = 100,
        "`lead` then `text` broken at spaces into lines of at most `width` columns, as the CLI wraps its reports.");
  nb::class_<NamedArrays>(m, "NamedArrays", "Arrays with names, as analyze and the replay read them in place.")
      .def(nb::init<std::vector<std::string>, std::vector<Array>, std::vector<std::optional<std::string>>>(),
           nb::arg("names"), nb::arg("arrays"), nb::arg("froms"));
  m.def("analyze", &analyze, default_fp, nb::arg("arrays"), nb::arg("formats"), nb::arg("scale") = "none", nb::arg("block") = 0,
        nb::arg("scale_rule") = "ocp", nb::arg("blocks") = false, FMTCHECK_POLICY_ARGS, nb::arg("seed") = 0,
        nb::arg("threads") = 0, "The measures of `fmtcheck analyze --json` for named arrays, and the blocks with blocks=True.");
  m.def("gpu_analyze", &gpu_analyze, default_fp, nb::arg("names"), nb::arg("arrays"), nb::arg("formats"), nb::arg("scale") = "none",
        nb::arg("block") = 0, nb::arg("scale_rule") = "ocp", nb::arg("blocks") = false, FMTCHECK_POLICY_ARGS,
        nb::arg("seed") = 0, "analyze for float32 arrays in GPU memory, measured there.");

  nb::class_<ReplaySettings>(m, "ReplaySettings", "The knobs of `fmtcheck scale`, by the options' names.")
      .def("__init__", [](ReplaySettings* s, const std::string& recipe, const std::optional<std::string>& format,
                          const std::optional<std::string>& forward, const std::string& round,
                          const std::optional<std::string>& overflow, const std::string& subnormals,
                          const std::string& tininess, const std::string& nan, int sr_bits, double init_scale,
                          double growth_factor, double backoff_factor, int growth_interval, int scale_window,
                          std::optional<int> hysteresis, std::optional<double> min_scale, bool consecutive_hysteresis,
                          int history, const std::string& amax_compute, int margin) {
             new (s) ReplaySettings();
             s->recipe = recipe;
             s->format = format.value_or("");
             s->forward = forward.value_or("");
             s->policy = policy_text(round, overflow.value_or("nosat"), subnormals, tininess, nan, sr_bits);
             s->overflow_given = overflow.has_value();
             s->scaler.init_scale = init_scale;
             s->scaler.growth_factor = growth_factor;
             s->scaler.backoff_factor = backoff_factor;
             s->scaler.growth_interval = growth_interval;
             s->deepspeed.scale_window = scale_window;
             s->hysteresis_given = hysteresis.has_value();
             s->scaler.hysteresis = hysteresis.value_or(1);
             s->min_scale_given = min_scale.has_value();
             s->scaler.min_scale = min_scale.value_or(0.0);
             s->deepspeed.consecutive_hysteresis = consecutive_hysteresis;
             s->history = history;
             s->amax_compute = amax_compute;
             s->margin = margin;
           }, default_fp,
           nb::arg("recipe") = "gradscaler", nb::arg("format").none() = nb::none(), nb::arg("forward").none() = nb::none(),
           nb::arg("round") = "rne", nb::arg("overflow").none() = nb::none(), nb::arg("subnormals") = "keep",
           nb::arg("tininess") = "after", nb::arg("nan") = "ieee", nb::arg("sr_bits") = 0,
           nb::arg("init_scale") = 65536.0, nb::arg("growth_factor") = 2.0, nb::arg("backoff_factor") = 0.5,
           nb::arg("growth_interval") = 2000, nb::arg("scale_window") = 1000, nb::arg("hysteresis").none() = nb::none(),
           nb::arg("min_scale").none() = nb::none(), nb::arg("consecutive_hysteresis") = false, nb::arg("history") = 1024,
           nb::arg("amax_compute") = "max", nb::arg("margin") = 0);

  nb::class_<Replay>(m, "ScalingReplay", "A scaling recipe replayed step by step over gradient arrays.")
      .def(nb::init<const ReplaySettings&>(), nb::arg("settings"))
      .def("step", &Replay::step, default_fp, nb::arg("step"), nb::arg("arrays"), "Replays one step's named gradient arrays.")
      .def("rows", &Replay::rows, "One row per step and tensor: scale, skipped, counts, amax.")
      .def("summary", &Replay::summary, "The run's totals, as `fmtcheck scale --json` writes them.");
}

}  // namespace fmtcheck::python
