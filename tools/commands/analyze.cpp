// fmtcheck analyze: what each format (and scale) does to every tensor of
// some files or sharded checkpoints: counts, errors, amax, binade histogram,
// best power-of-two scale, per-block results, and a checkpoint's totals,
// measured by the library's analyze_tensor (analysis/tensor_analysis.hpp).
// --partial saves the records that `fmtcheck merge` combines with other
// runs'; merge prints them through this file's Analyzer, so both print the
// same bytes. Files are opened (and their headers checked) before any work,
// and output files are written only once everything succeeded.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <mutex>
#include <thread>
#include <nlohmann/json.hpp>
#include <regex>

#include "common/analysis_partial.hpp"
#include "common/command.hpp"
#include "common/options.hpp"
#include "common/output_file.hpp"
#include "common/progress.hpp"
#include "common/record_output.hpp"
#include "common/table.hpp"
#include "common/tensor_options.hpp"
#include "fmtcheck/analysis/verdict.hpp"
#include "common/version.hpp"
#include "fmtcheck/analysis/tensor_analysis.hpp"

#if defined(FMTCHECK_HAS_CUDA)
#include "fmtcheck/cuda/emulated_analysis.hpp"
#endif

namespace fmtcheck::cli {
namespace {

struct AnalyzeArgs {
  std::vector<std::string> paths;
  std::string formats = "fp16,bf16,e4m3,e5m2";
  PolicyOptions policy;
  std::uint64_t seed = 0;
  std::string scale = "none";
  int block = 0;
  std::string scale_rule = "ocp";
  std::string tensors;
  ReadArgs read;
  std::string csv, histogram_csv, block_csv, json;
  std::string partial;              // --partial FILE: the records, for fmtcheck merge
  std::vector<std::string> shards;  // --shard NAME: only these shards of a checkpoint
  unsigned threads = 0;  // 0: every core
  bool full = false;     // the full table instead of the compact one
  std::string device = "cpu";
};

// The MX blocks of one tensor under one format, for --block-csv.
struct TensorBlocks {
  std::string file, tensor, format;
  std::uint64_t block_size;
  std::vector<BlockResult> blocks;
};

// Counts in full, other numbers to four significant digits: enough to read
// a table (the CSV keeps every digit).
std::string compact(double v) {
  if (v == std::floor(v) && std::abs(v) < 1e15) return std::to_string(static_cast<long long>(v));
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", v);
  return text;
}

class Analyzer {
 public:
  explicit Analyzer(const AnalyzeArgs& args)
      : args_(args),
        settings_{format_list_from_string(args.formats), policy_from_text(args.policy), args.seed, args.scale,
                  args.block, args.scale_rule, !args.block_csv.empty(), args.threads} {
    check_settings(settings_);
    if (!args.block_csv.empty() && args.block == 0) throw UsageError("--block-csv needs --block N");
    device_ = parse_device_option(args.device);
    filter_ = tensor_filter(args.tensors);
  }

  void run() {
    const ReadOptions read = to_read_options(args_.read);
    std::vector<InputFile> files = open_inputs(args_.paths, args_.shards, read);
    // Progress counts half-bytes: analyze_tensor reads each value twice (or skips the second pass).
    std::uint64_t total = 0;
    for (const InputFile& in : files) {
      if (!in.file->skipped().empty()) {
        std::string names;
        for (const std::string& n : in.file->skipped()) names += (names.empty() ? "" : ", ") + n;
        std::fprintf(stderr, "note: %s: skipped tensors that are not floating point: %s\n", in.file->path().c_str(), names.c_str());
      }
      for (const TensorInfo& t : in.file->tensors()) total += selected(t) ? 2 * t.count * bytes_per_value(t) : 0;
    }
    Progress progress("analyze", total, 0.5);
    std::uint64_t done = 0;
    for (std::size_t f = 0; f < files.size(); ++f) {
      progress.set_note((files[f].model.empty() ? "file " : "shard ") + std::to_string(f + 1) + "/" + std::to_string(files.size()));
      for (std::size_t i = 0; i < files[f].file->tensors().size(); ++i) {
        if (selected(files[f].file->tensors()[i])) analyze_tensor(files[f], i, progress, done);
      }
    }
    if (results_.empty()) throw UsageError("no tensors to analyze" + (args_.tensors.empty() ? "" : " (none matches --tensors '" + args_.tensors + "')"));
    AnalysisRun run{options(), describe(settings_.policy), std::move(results_), std::move(histograms_)};
    if (!args_.partial.empty()) partial_ = partial_text(run);
    load(std::move(run));
  }

  // The records to print: this run's, or (fmtcheck merge) those of earlier runs.
  void load(AnalysisRun run) {
    add_model_totals(run);
    policy_text_ = run.policy;
    results_ = std::move(run.results);
    histograms_ = std::move(run.histograms);
  }

  // One row per tensor and format, every measure the terminal can hold.
  void print_full_table() const {
    Table table({"file", "tensor", "format", "scale", "values", "exact", "overflow", "saturated", "underflow",
                 "subnormal", "max rel err", "rms rel err", "amax", "best pow2 scale"});
    for (const Result& r : results_) {
      const auto get = [&](const std::string& name) -> std::string {
        for (const auto& [m, v] : r.measures) {
          if (m == name) return compact(v);
        }
        return "-";
      };
      table.add_row({r.file, r.tensor, r.format, r.scale, get("values"), get("exact"), get("overflow"), get("saturated"),
                     get("underflow_to_zero"), get("subnormal"), get("max_rel_error"), get("rms_rel_error"), get("amax"),
                     get("best_pow2_scale")});
    }
    std::printf("policy %s\n%s", policy_text_.c_str(), table.aligned().c_str());
  }

  // Per file, one row per tensor with the formats side by side (overflowing
  // or saturated / underflowing to zero), after a checkpoint's shards its
  // whole-model row, then the verdict per format (over the tensors: the
  // whole-model rows would count every value twice).
  void print_compact() const {
    std::printf("policy %s\n", policy_text_.c_str());
    const std::size_t per_tensor = settings_.formats.size();
    for (std::size_t first = 0; first < results_.size();) {
      std::size_t last = first;  // one past this file's results
      std::uint64_t values = 0;
      while (last < results_.size() && results_[last].file == results_[first].file) {
        values += results_[last].outcome.stats.values;  // the first format's: every format sees the same values
        last += per_tensor;
      }
      std::size_t tensors = (last - first) / per_tensor;
      std::string what = results_[first].file;
      if (is_model_total(results_[first])) {
        tensors = 0;
        for (const Result& r : results_) tensors += r.model == results_[first].model && !is_model_total(r) ? 1 : 0;
        tensors /= per_tensor;
        what += ": the whole model";
      }
      std::printf("\n%s: %zu %s, %llu values\nper format, the values that overflow / underflow to zero %s%s:\n",
                  what.c_str(), tensors, tensors == 1 ? "tensor" : "tensors",
                  static_cast<unsigned long long>(values), args_.block > 0 ? "with per-block scales " : "at scale ",
                  scale_text().c_str());
      print_file_rows(first, last);
      first = last;
    }
    std::vector<TensorOutcome> outcomes;
    for (const Result& r : results_) {
      if (!is_model_total(r)) outcomes.push_back(r.outcome);
    }
    std::printf("\nverdict:\n%s", verdict(outcomes, settings_.formats, scale_text(), terminal_width).c_str());
  }

  void write_outputs() const {
    // Build every output first, then commit them together: an error leaves no file.
    std::vector<std::pair<std::unique_ptr<OutputFile>, std::string>> outputs;
    if (!args_.csv.empty()) {
      Table t({"file", "tensor", "format", "scale", "measure", "value"});
      for (const Result& r : results_) {
        for (const auto& [m, v] : r.measures) t.add_row({r.file, r.tensor, r.format, r.scale, m, shortest(v)});
      }
      outputs.emplace_back(std::make_unique<OutputFile>(args_.csv), t.csv());
    }
    if (!args_.histogram_csv.empty()) {
      Table t({"file", "tensor", "binade", "count"});
      for (const TensorHistogram& h : histograms_) {
        for (const auto& [b, n] : histogram_rows(h.input)) t.add_row({h.file, h.tensor, b, std::to_string(n)});
      }
      outputs.emplace_back(std::make_unique<OutputFile>(args_.histogram_csv), t.csv());
    }
    if (!args_.block_csv.empty()) {
      std::vector<std::string> columns{"file", "tensor", "format", "scale_rule"};
      for (const std::string& name : field_names(block_record({}, 0, 0))) columns.push_back(name);
      Table t(columns);
      for (const TensorBlocks& tb : blocks_) {
        for (std::size_t b = 0; b < tb.blocks.size(); ++b) {
          std::vector<std::string> row{tb.file, tb.tensor, tb.format, args_.scale_rule};
          for (std::string& cell : to_cells(block_record(tb.blocks[b], b, b * tb.block_size))) row.push_back(std::move(cell));
          t.add_row(row);
        }
      }
      outputs.emplace_back(std::make_unique<OutputFile>(args_.block_csv), t.csv());
    }
    if (!args_.json.empty()) outputs.emplace_back(std::make_unique<OutputFile>(args_.json), json() + "\n");
    if (!args_.partial.empty()) outputs.emplace_back(std::make_unique<OutputFile>(args_.partial), partial_);
    for (auto& [file, text] : outputs) file->write(text);
    for (auto& [file, text] : outputs) file->commit();
  }

 private:
  const AnalyzeArgs& args_;
  AnalysisSettings settings_;
  Device device_ = Device::cpu;
  std::optional<std::regex> filter_;
  std::vector<Result> results_;
  std::vector<TensorHistogram> histograms_;
  std::vector<TensorBlocks> blocks_;
  std::string policy_text_, partial_;

  std::string scale_text() const { return applied_scale(args_.scale, args_.block, args_.scale_rule); }

  // The rows of results_[first, last): as many formats side by side as fit
  // beside tensor names of up to 40 characters (longer names are cut in the
  // middle to fit), the rest in further tables below.
  void print_file_rows(std::size_t first, std::size_t last) const {
    const std::size_t per_tensor = settings_.formats.size();
    std::size_t min_name = 0;
    for (std::size_t i = first; i < last; i += per_tensor) min_name = std::max(min_name, results_[i].tensor.size());
    min_name = std::min<std::size_t>(min_name, 40);
    const auto cell = [](const TensorOutcome& o) {
      return std::to_string(o.stats.overflow + o.stats.saturated) + "/" + std::to_string(o.stats.underflow_to_zero);
    };
    std::size_t amax = std::string("amax").size();
    std::vector<std::size_t> width(per_tensor);
    for (std::size_t i = first; i < last; i += per_tensor) {
      amax = std::max(amax, compact(results_[i].amax).size());
      for (std::size_t f = 0; f < per_tensor; ++f) {
        width[f] = std::max({width[f], settings_.formats[f].name.size(), cell(results_[i + f].outcome).size()});
      }
    }
    for (std::size_t group = 0; group < per_tensor;) {
      std::size_t end = group, used = min_name + 2 + amax;
      while (end < per_tensor && (end == group || used + 2 + width[end] <= terminal_width)) used += 2 + width[end++];
      std::vector<std::string> headers{"tensor", "amax"};
      for (std::size_t f = group; f < end; ++f) headers.push_back(settings_.formats[f].name);
      Table table(headers);
      for (std::size_t i = first; i < last; i += per_tensor) {
        std::vector<std::string> row{results_[i].tensor, compact(results_[i].amax)};
        for (std::size_t f = group; f < end; ++f) row.push_back(cell(results_[i + f].outcome));
        table.add_row(row);
      }
      table.shorten_to_fit(0, terminal_width);
      std::printf("%s%s", group == 0 ? "" : "\n", table.aligned().c_str());
      group = end;
    }
  }

  bool selected(const TensorInfo& t) const { return !filter_ || std::regex_search(t.name, *filter_); }

  // Everything that changes the numbers: partial results merge only when these agree.
  nlohmann::ordered_json options() const {
    return {{"version", fmtcheck_version},        {"formats", args_.formats},   {"policy", describe(settings_.policy)},
            {"seed", args_.seed},                 {"scale", args_.scale},       {"block", args_.block},
            {"scale_rule", args_.scale_rule},     {"tensors", args_.tensors},   {"dtype", args_.read.dtype},
            {"shape", args_.read.shape},          {"column", args_.read.column}};
  }

  static std::uint64_t bytes_per_value(const TensorInfo& t) { return static_cast<std::uint64_t>(t.dtype.storage_bits + 7) / 8; }

  void analyze_tensor(const InputFile& in, std::size_t index, Progress& progress, std::uint64_t& done) {
    const TensorFile& file = *in.file;
    const TensorInfo& info = file.tensors()[index];
    const std::uint64_t bytes = bytes_per_value(info);
    std::mutex mutex;  // guards the progress
    const auto progressed = [&](std::uint64_t n) {
      const std::lock_guard lock(mutex);
      progress.update(done += n * bytes);
    };
    TensorAnalysis analysis = device_ == Device::cuda ? analyze_on_gpu(file, index, progressed)
                                                      : fmtcheck::analyze_tensor(file, index, settings_, progressed);
    for (FormatAnalysis& f : analysis.formats) {
      const TensorOutcome outcome{f.format.name, f.stats, settings_.block > 0, f.best, f.underflow_at_best};
      results_.push_back({in.model, file.path(), info.name, f.format.name, f.scale, index, std::move(f.measures), outcome,
                          analysis.input.amax});
      if (settings_.keep_blocks) {
        blocks_.push_back({file.path(), info.name, f.format.name, static_cast<std::uint64_t>(settings_.block), std::move(f.blocks)});
      }
    }
    histograms_.push_back({in.model, file.path(), info.name, index, std::move(analysis.input)});
  }

  // --device cuda: the tensor read into memory (float32 values only), then
  // measured on the GPU.
  TensorAnalysis analyze_on_gpu(const TensorFile& file, std::size_t index,
                                const std::function<void(std::uint64_t)>& progressed) const {
#if defined(FMTCHECK_HAS_CUDA)
    const TensorInfo& info = file.tensors()[index];
    if (info.as_double) {
      throw UsageError("--device cuda: tensor '" + info.name + "' holds float64 values; the GPU measures float32");
    }
    std::vector<float> values(static_cast<std::size_t>(info.count));
    file.for_each_chunk(index, std::size_t{1} << 22, [&](const TensorChunk& c) {
      const auto x = std::get<std::span<const float>>(c.values);
      std::copy(x.begin(), x.end(), values.begin() + static_cast<std::ptrdiff_t>(c.first));
      progressed(c.size());
    }, settings_.threads != 0 ? settings_.threads : std::max(1u, std::thread::hardware_concurrency()));
    try {
      TensorAnalysis analysis = cuda::analyze_values_on_gpu(values, settings_);
      progressed(info.count);
      return analysis;
    } catch (const std::invalid_argument& e) {  // a format wider than the GPU's containers
      throw UsageError(std::string("--device cuda: ") + e.what());
    }
#else
    (void)file, (void)index, (void)progressed;
    throw UsageError("--device cuda: this fmtcheck was built without CUDA");
#endif
  }

  std::string json() const {
    nlohmann::ordered_json out;
    out["policy"] = policy_text_;
    out["results"] = nlohmann::ordered_json::array();
    for (const Result& r : results_) {
      nlohmann::ordered_json j;
      j["file"] = r.file;
      j["tensor"] = r.tensor;
      j["format"] = r.format;
      j["scale"] = r.scale;
      for (const auto& [m, v] : r.measures) j["measures"][m] = v;
      out["results"].push_back(j);
    }
    out["histograms"] = nlohmann::ordered_json::array();
    for (const TensorHistogram& h : histograms_) {
      nlohmann::ordered_json j;
      j["file"] = h.file;
      j["tensor"] = h.tensor;
      for (const auto& [b, n] : histogram_rows(h.input)) j["binades"][b] = n;
      out["histograms"].push_back(j);
    }
    return out.dump(2);
  }
};

// Writes the output files, then prints the table (and verdict) --full asks for.
void print(const Analyzer& analyzer, const AnalyzeArgs& args) {
  analyzer.write_outputs();
  if (args.full) {
    analyzer.print_full_table();
  } else {
    analyzer.print_compact();
  }
}

int run_analyze(const AnalyzeArgs& args) {
  Analyzer analyzer(args);
  analyzer.run();
  print(analyzer, args);
  return 0;
}

const bool registered = register_command({
    "analyze", "what each format and scale does to the tensors of .npy, safetensors, raw or CSV files", 70,
    [](CLI::App& sub) {
      auto args = std::make_shared<AnalyzeArgs>();
      sub.add_option("PATH", args->paths,
                     "tensor files: .npy, .safetensors, .csv, raw binary with --dtype, or a sharded checkpoint "
                     "(*.safetensors.index.json, or a folder holding model.safetensors.index.json)")->required();
      sub.add_option("--formats", args->formats, "formats to compare")->capture_default_str();
      add_policy_options(sub, args->policy, false);
      sub.add_option("--seed", args->seed, "seed of the random draws for --round sr (element i draws RandomStream{seed}.draw(i), half of splitmix64(seed, i / 2))");
      sub.add_option("--scale", args->scale, "none, auto (best power of two), amax[:MARGIN] (fmt_max / amax / 2^MARGIN), pow2:N")
          ->capture_default_str();
      sub.add_option("--block", args->block, "MX-style: blocks of N values share an E8M0 scale");
      sub.add_option("--scale-rule", args->scale_rule, "block scale: ocp (floor), ceil (CUDA/TE), rne")->capture_default_str();
      sub.add_option("--tensors", args->tensors, "analyze only tensors whose name matches this regex");
      add_read_options(sub, args->read);
      sub.add_option("--csv", args->csv, "tidy CSV: file,tensor,format,scale,measure,value");
      sub.add_option("--histogram-csv", args->histogram_csv,
                     "tidy CSV of the input binades: file,tensor,binade,count (binade: floor(log2|x|), or zero, infinite, not_a_number)");
      sub.add_option("--block-csv", args->block_csv, "with --block: one row per block and format (amax, scale_log2, counts, errors)");
      sub.add_option("--threads", args->threads, "threads measuring chunks of a tensor (default: every core)");
      add_device_option(sub, args->device);
      sub.add_option("--json", args->json, "everything as JSON");
      sub.add_option("--partial", args->partial, "also save the results for `fmtcheck merge` (runs over parts of the inputs add up exactly)");
      sub.add_option("--shard", args->shards, "with a checkpoint index: analyze only this shard (its file name; repeatable)");
      sub.add_flag("--full", args->full,
                   "print one row per tensor and format with every measure (default: a table per file that fits 100 "
                   "columns, and a verdict per format)");
      return std::function<int()>([=] { return run_analyze(*args); });
    }});

}  // namespace

int print_merged(AnalysisRun run, const MergeOutputs& outputs) {
  // The settings that shape the output, as the partials recorded them (read_partial checked their types).
  AnalyzeArgs args;
  args.formats = run.options.at("formats").get<std::string>();
  args.scale = run.options.at("scale").get<std::string>();
  args.block = run.options.at("block").get<int>();
  args.scale_rule = run.options.at("scale_rule").get<std::string>();
  args.csv = outputs.csv;
  args.histogram_csv = outputs.histogram_csv;
  args.json = outputs.json;
  args.full = outputs.full;
  Analyzer analyzer(args);
  analyzer.load(std::move(run));
  print(analyzer, args);
  return 0;
}

}  // namespace fmtcheck::cli
