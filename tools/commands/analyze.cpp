// fmtcheck analyze: what each format (and scale) does to every tensor of
// some files: counts, errors, amax, binade histogram, best power-of-two
// scale, per-block results. Files are opened (and their headers checked)
// before any work, and output files are written only once everything
// succeeded. Chunks of a tensor are measured on all cores; their results
// are merged in chunk order, so the output does not depend on the threads.
#include <cmath>
#include <cstdio>
#include <mutex>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "common/command.hpp"
#include "common/options.hpp"
#include "common/output_file.hpp"
#include "common/progress.hpp"
#include "common/table.hpp"
#include "common/tensor_options.hpp"
#include "common/verdict.hpp"
#include "fmtcheck/analysis/analysis.hpp"
#include "fmtcheck/analysis/scaling.hpp"
#include "fmtcheck/core/decode.hpp"

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
  unsigned threads = 0;  // 0: every core
  bool full = false;     // the full table instead of the compact one
};

// --scale none | auto | amax[:MARGIN] | pow2:N
struct ScaleSpec {
  enum class Kind { none, automatic, amax, pow2 } kind = Kind::none;
  int n = 0;  // margin or exponent
};

ScaleSpec parse_scale(const std::string& text) {
  const auto number = [&](const std::string& s) {
    std::size_t used = 0;
    int v = 0;
    try {
      v = std::stoi(s, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (s.empty() || used != s.size()) throw UsageError("bad --scale '" + text + "': expected none, auto, amax[:MARGIN] or pow2:N");
    return v;
  };
  if (text == "none") return {};
  if (text == "auto") return {ScaleSpec::Kind::automatic, 0};
  if (text == "amax") return {ScaleSpec::Kind::amax, 0};
  if (text.rfind("amax:", 0) == 0) return {ScaleSpec::Kind::amax, number(text.substr(5))};
  if (text.rfind("pow2:", 0) == 0) {
    const int n = number(text.substr(5));
    if (n < -126 || n > 127) throw UsageError("--scale pow2:N needs N in [-126, 127] (a normal float32 scale)");
    return {ScaleSpec::Kind::pow2, n};
  }
  throw UsageError("bad --scale '" + text + "': expected none, auto, amax[:MARGIN] or pow2:N");
}

BlockScaleRule parse_rule(const std::string& text) {
  if (text == "ocp") return BlockScaleRule::ocp;
  if (text == "ceil") return BlockScaleRule::ceil;
  if (text == "rne") return BlockScaleRule::rne;
  throw UsageError("bad --scale-rule '" + text + "': expected ocp, ceil or rne");
}

double max_finite(const Format& f) { return to_double(f, f.to_storage(f.max_finite_code())); }

float scale_for(const ScaleSpec& spec, double amax, const Format& f) {
  switch (spec.kind) {
    case ScaleSpec::Kind::none: return 1.0f;
    case ScaleSpec::Kind::pow2: return std::ldexp(1.0f, spec.n);
    case ScaleSpec::Kind::automatic: return std::ldexp(1.0f, best_pow2_exponent(amax, f).value_or(0));
    case ScaleSpec::Kind::amax:
      return fp8_scale_from_amax(static_cast<float>(amax), static_cast<float>(max_finite(f)), spec.n, 1.0f);
  }
  return 1.0f;
}

// One tensor under one format: the measures, in the order the CSV lists them.
struct Result {
  std::string file, tensor, format, scale;
  std::vector<std::pair<std::string, double>> measures;
  TensorOutcome outcome;  // what the compact table and the verdict read
  double amax = 0;
};

struct TensorHistogram {
  std::string file, tensor;
  InputSummary input;
};

// The MX blocks of one tensor under one format, for --block-csv.
struct TensorBlocks {
  std::string file, tensor, format;
  std::uint64_t block_size;
  std::vector<BlockResult> blocks;
};

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

std::string scale_label(float scale) { return shortest(scale); }

// The histogram's rows: every binade that occurs (floor(log2 |x|) of the
// nonzero finite values), then "zero", "infinite" and "not_a_number"
// (either sign), always. Not "nan": pandas would read that as a missing value.
std::vector<std::pair<std::string, std::uint64_t>> histogram_rows(const InputSummary& in) {
  std::vector<std::pair<std::string, std::uint64_t>> rows;
  for (const auto& [b, n] : in.binades()) rows.emplace_back(std::to_string(b), n);
  rows.emplace_back("zero", in.zero);
  rows.emplace_back("infinite", in.inf);
  rows.emplace_back("not_a_number", in.nan);
  return rows;
}

class Analyzer {
 public:
  explicit Analyzer(const AnalyzeArgs& args)
      : args_(args),
        formats_(parse_format_list(args.formats)),
        policy_(to_policy(args.policy)),
        scale_(parse_scale(args.scale)),
        rule_(parse_rule(args.scale_rule)) {
    if (args.block < 0) throw UsageError("--block must be positive");
    if (args.block > 0 && scale_.kind != ScaleSpec::Kind::none) {
      throw UsageError("--block sets per-block scales; it cannot be combined with --scale " + args.scale);
    }
    if (!args.block_csv.empty() && args.block == 0) throw UsageError("--block-csv needs --block N");
    threads_ = args.threads != 0 ? args.threads : std::max(1u, std::thread::hardware_concurrency());
    filter_ = tensor_filter(args.tensors);
  }

  void run() {
    const ReadOptions read = to_read_options(args_.read);
    std::vector<std::unique_ptr<TensorFile>> files;
    std::uint64_t total = 0;
    for (const std::string& path : args_.paths) {
      files.push_back(open_tensors(path, read));
      if (!files.back()->skipped().empty()) {
        std::string names;
        for (const std::string& n : files.back()->skipped()) names += (names.empty() ? "" : ", ") + n;
        std::fprintf(stderr, "note: %s: skipped tensors that are not floating point: %s\n", path.c_str(), names.c_str());
      }
      for (const TensorInfo& t : files.back()->tensors()) total += selected(t) ? 2 * t.count : 0;
    }
    Progress progress("analyze", total);
    std::uint64_t done = 0;
    for (const auto& file : files) {
      for (std::size_t i = 0; i < file->tensors().size(); ++i) {
        if (selected(file->tensors()[i])) analyze_tensor(*file, i, progress, done);
      }
    }
    if (results_.empty()) throw UsageError("no tensors to analyze" + (args_.tensors.empty() ? "" : " (none matches --tensors '" + args_.tensors + "')"));
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
    std::printf("policy %s\n%s", describe(policy_).c_str(), table.aligned().c_str());
  }

  // Per file, one row per tensor with the formats side by side (overflowing
  // or saturated / underflowing to zero), then the verdict per format.
  void print_compact() const {
    std::printf("policy %s\n", describe(policy_).c_str());
    const std::size_t per_tensor = formats_.size();
    for (std::size_t first = 0; first < results_.size();) {
      std::size_t last = first;  // one past this file's results
      std::uint64_t values = 0;
      while (last < results_.size() && results_[last].file == results_[first].file) {
        values += results_[last].outcome.stats.values;  // the first format's: every format sees the same values
        last += per_tensor;
      }
      const std::size_t tensors = (last - first) / per_tensor;
      std::printf("\n%s: %zu %s, %llu values\nper format, the values that overflow / underflow to zero %s%s:\n",
                  results_[first].file.c_str(), tensors, tensors == 1 ? "tensor" : "tensors",
                  static_cast<unsigned long long>(values), args_.block > 0 ? "with per-block scales " : "at scale ",
                  scale_text().c_str());
      print_file_rows(first, last);
      first = last;
    }
    std::vector<TensorOutcome> outcomes;
    for (const Result& r : results_) outcomes.push_back(r.outcome);
    std::printf("\nverdict:\n%s", verdict(outcomes, formats_, scale_text(), terminal_width).c_str());
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
      Table t({"file", "tensor", "format", "scale_rule", "block", "start", "amax", "scale_log2", "values", "exact", "inexact",
               "overflow", "saturated", "underflow_to_zero", "subnormal", "max_abs_error", "max_rel_error"});
      for (const TensorBlocks& tb : blocks_) {
        for (std::size_t b = 0; b < tb.blocks.size(); ++b) {
          const BlockResult& r = tb.blocks[b];
          const ConversionStats& s = r.stats;
          t.add_row({tb.file, tb.tensor, tb.format, args_.scale_rule, std::to_string(b), std::to_string(b * tb.block_size),
                     shortest(r.amax), std::to_string(r.scale_log2), std::to_string(s.values), std::to_string(s.exact),
                     std::to_string(s.inexact), std::to_string(s.overflow), std::to_string(s.saturated),
                     std::to_string(s.underflow_to_zero), std::to_string(s.subnormal), shortest(s.max_abs_error),
                     shortest(s.max_rel_error)});
        }
      }
      outputs.emplace_back(std::make_unique<OutputFile>(args_.block_csv), t.csv());
    }
    if (!args_.json.empty()) outputs.emplace_back(std::make_unique<OutputFile>(args_.json), json() + "\n");
    for (auto& [file, text] : outputs) file->write(text);
    for (auto& [file, text] : outputs) file->commit();
  }

 private:
  const AnalyzeArgs& args_;
  std::vector<Format> formats_;
  Policy policy_;
  ScaleSpec scale_;
  BlockScaleRule rule_;
  std::optional<std::regex> filter_;
  unsigned threads_ = 1;
  std::vector<Result> results_;
  std::vector<TensorHistogram> histograms_;
  std::vector<TensorBlocks> blocks_;

  bool selected(const TensorInfo& t) const { return !filter_ || std::regex_search(t.name, *filter_); }

  // The scale the run applied, as --scale or --block gave it.
  std::string scale_text() const {
    if (args_.block > 0) return block_label();
    return args_.scale == "none" ? "1" : args_.scale;
  }
  std::string block_label() const {
    std::string s = "block";
    s += std::to_string(args_.block);
    s += ":";
    return s += args_.scale_rule;
  }

  // The rows of results_[first, last): as many formats side by side as fit
  // beside tensor names of up to 40 characters (longer names are cut in the
  // middle to fit), the rest in further tables below.
  void print_file_rows(std::size_t first, std::size_t last) const {
    const std::size_t per_tensor = formats_.size();
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
        width[f] = std::max({width[f], formats_[f].name.size(), cell(results_[i + f].outcome).size()});
      }
    }
    for (std::size_t group = 0; group < per_tensor;) {
      std::size_t end = group, used = min_name + 2 + amax;
      while (end < per_tensor && (end == group || used + 2 + width[end] <= terminal_width)) used += 2 + width[end++];
      std::vector<std::string> headers{"tensor", "amax"};
      for (std::size_t f = group; f < end; ++f) headers.push_back(formats_[f].name);
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

  void analyze_tensor(const TensorFile& file, std::size_t index, Progress& progress, std::uint64_t& done) {
    const TensorInfo& info = file.tensors()[index];
    // Whole blocks per chunk, so that --block sees the blocks of the tensor.
    const std::size_t block = args_.block > 0 ? static_cast<std::size_t>(args_.block) : 1;
    const std::size_t chunk = ((std::size_t{1} << 20) + block - 1) / block * block;
    const std::size_t chunks = static_cast<std::size_t>((info.count + chunk - 1) / chunk);
    std::mutex mutex;  // guards `input` and the progress
    const auto progressed = [&](std::size_t n) {
      const std::lock_guard lock(mutex);
      progress.update(done += n);
    };

    // Each format's measurements, one slot per chunk (merged in order below).
    struct PerFormat {
      std::optional<ScaledConversion> scaled;
      std::optional<BlockScaledConversion> blocked;
      std::optional<ScaledConversion> at_best;  // only when it differs from `scaled`; flags only
      std::optional<std::uint64_t> best_underflow;  // read off the input summary instead of at_best
      std::optional<int> best;
      std::vector<ConversionStats> scaled_stats, best_stats;
      std::vector<BlockTotals> block_totals;
      std::vector<std::vector<BlockResult>> block_results;
    };
    std::vector<PerFormat> per_format(formats_.size());
    const bool keep_blocks = !args_.block_csv.empty();
    for (PerFormat& p : per_format) {
      p.scaled_stats.resize(chunks);
      p.best_stats.resize(chunks);
      p.block_totals.resize(chunks);
      if (keep_blocks) p.block_results.resize(chunks);
    }
    const auto measure_main = [&](const TensorChunk& c) {
      const std::size_t slot = static_cast<std::size_t>(c.first / chunk);
      for (PerFormat& p : per_format) {
        std::visit([&](auto x) {
          if (p.scaled) p.scaled->measure(x, c.first, p.scaled_stats[slot]);
          if (p.blocked) p.blocked->measure(x, c.first, p.block_totals[slot], keep_blocks ? &p.block_results[slot] : nullptr);
        }, c.values);
      }
    };

    // Pass 1: the input summary, and the conversions whose scale does not
    // depend on the tensor's amax.
    const bool scale_needs_amax = scale_.kind == ScaleSpec::Kind::automatic || scale_.kind == ScaleSpec::Kind::amax;
    if (!scale_needs_amax) {
      for (std::size_t f = 0; f < formats_.size(); ++f) {
        if (args_.block > 0) {
          per_format[f].blocked.emplace(formats_[f], policy_, args_.block, rule_);
        } else {
          per_format[f].scaled.emplace(formats_[f], policy_, scale_for(scale_, 0, formats_[f]), args_.seed);
        }
      }
    }
    InputSummary input;
    file.for_each_chunk(index, chunk, [&](const TensorChunk& c) {
      InputSummary part;
      std::visit([&](auto x) { part.add(x); }, c.values);
      if (!scale_needs_amax) measure_main(c);
      const std::lock_guard lock(mutex);
      input += part;
      progress.update(done += c.size());
    }, threads_);

    // Pass 2: what needs the amax: its scale, and the underflow at the best
    // power of two where the input summary cannot tell it.
    bool second_pass = false;
    for (std::size_t f = 0; f < formats_.size(); ++f) {
      PerFormat& p = per_format[f];
      p.best = best_pow2_exponent(input.amax, formats_[f]);
      if (scale_needs_amax) p.scaled.emplace(formats_[f], policy_, scale_for(scale_, input.amax, formats_[f]), args_.seed);
      if (p.best && (!p.scaled || p.scaled->scale() != std::ldexp(1.0f, *p.best))) {
        p.best_underflow = underflow_at_pow2_scale(input, formats_[f], policy_, *p.best, info.as_double);
        if (!p.best_underflow) p.at_best.emplace(formats_[f], policy_, std::ldexp(1.0f, *p.best), args_.seed);
      }
      second_pass = second_pass || scale_needs_amax || p.at_best;
    }
    if (second_pass) {
      file.for_each_chunk(index, chunk, [&](const TensorChunk& c) {
        if (scale_needs_amax) measure_main(c);
        const std::size_t slot = static_cast<std::size_t>(c.first / chunk);
        for (PerFormat& p : per_format) {
          if (p.at_best) std::visit([&](auto x) { p.at_best->count_flags(x, c.first, p.best_stats[slot]); }, c.values);
        }
        progressed(c.size());
      }, threads_);
    } else {
      progressed(info.count);
    }

    for (std::size_t f = 0; f < formats_.size(); ++f) {
      PerFormat& p = per_format[f];
      ConversionStats stats, best;
      BlockTotals totals;
      for (std::size_t c = 0; c < chunks; ++c) {
        stats += p.scaled_stats[c];
        best += p.best_stats[c];
        totals += p.block_totals[c];
      }
      Result r{file.path(), info.name, formats_[f].name, "", {}, {}, input.amax};
      r.measures = measures_of(p.scaled ? stats : totals.stats, input);
      r.outcome = {formats_[f].name, p.scaled ? stats : totals.stats, !p.scaled, std::nullopt, 0};
      if (p.scaled) {
        r.scale = scale_label(p.scaled->scale());
      } else {
        r.scale = block_label();
        r.measures.emplace_back("blocks", static_cast<double>(totals.blocks));
        r.measures.emplace_back("min_block_scale_log2", totals.min_scale_log2);
        r.measures.emplace_back("max_block_scale_log2", totals.max_scale_log2);
      }
      if (p.best) {
        const ConversionStats& at_best = p.at_best ? best : stats;
        const std::uint64_t underflow = p.best_underflow.value_or(at_best.underflow_to_zero);
        r.outcome.best = p.best;
        r.outcome.underflow_at_best = underflow;
        r.measures.emplace_back("best_pow2_scale", std::ldexp(1.0, *p.best));
        r.measures.emplace_back("underflow_at_best_pow2_scale",
                                input.values ? static_cast<double>(underflow) / static_cast<double>(input.values) : 0.0);
      }
      results_.push_back(std::move(r));
      if (keep_blocks) {
        TensorBlocks tb{file.path(), info.name, formats_[f].name, block, {}};
        for (auto& part : p.block_results) tb.blocks.insert(tb.blocks.end(), part.begin(), part.end());
        blocks_.push_back(std::move(tb));
      }
    }
    histograms_.push_back({file.path(), info.name, std::move(input)});
  }

  std::string json() const {
    nlohmann::ordered_json out;
    out["policy"] = describe(policy_);
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

int run_analyze(const AnalyzeArgs& args) {
  Analyzer analyzer(args);
  analyzer.run();
  analyzer.write_outputs();
  if (args.full) {
    analyzer.print_full_table();
  } else {
    analyzer.print_compact();
  }
  return 0;
}

const bool registered = register_command({
    "analyze", "what each format and scale does to the tensors of .npy, safetensors, raw or CSV files", 70,
    [](CLI::App& sub) {
      auto args = std::make_shared<AnalyzeArgs>();
      sub.add_option("PATH", args->paths, "tensor files: .npy, .safetensors, .csv, or raw binary with --dtype")->required();
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
      sub.add_option("--json", args->json, "everything as JSON");
      sub.add_flag("--full", args->full,
                   "print one row per tensor and format with every measure (default: a table per file that fits 100 "
                   "columns, and a verdict per format)");
      return std::function<int()>([=] { return run_analyze(*args); });
    }});

}  // namespace
}  // namespace fmtcheck::cli
