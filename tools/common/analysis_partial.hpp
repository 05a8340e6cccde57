// What `fmtcheck analyze` finds, as records that can be saved in a partial
// result file (--partial) and merged from several runs (`fmtcheck merge`):
// one run over all the inputs and the merge of runs over any split of them
// print the same bytes, because both order the records the same way and
// compute the whole-model totals from the same raw counters in that order.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "fmtcheck/analysis/verdict.hpp"
#include "fmtcheck/analysis/analysis.hpp"

namespace fmtcheck::cli {

// Tensor name of the rows that total a whole checkpoint.
inline constexpr const char* whole_model = "(all)";

// One tensor under one format: the measures, in the order the CSV lists them,
// and what the terminal output reads: the raw counters they came from (which
// a whole-model total adds up), the best power-of-two scale, the amax.
struct Result {
  std::string model;  // the checkpoint index the tensor came from; empty for a plain file
  std::string file, tensor, format, scale;
  std::uint64_t position = 0;  // the tensor's place in its file
  std::vector<std::pair<std::string, double>> measures;
  TensorOutcome outcome;
  double amax = 0;
};

// A checkpoint's whole-model row (its file is the index, not a shard).
inline bool is_model_total(const Result& r) { return !r.model.empty() && r.file == r.model; }

struct TensorHistogram {
  std::string model, file, tensor;
  std::uint64_t position = 0;
  InputSummary input;
};

// The records of one run (or of a merge), without whole-model totals.
struct AnalysisRun {
  nlohmann::ordered_json options;  // everything that changes the numbers, and the fmtcheck version
  std::string policy;              // as the outputs print it
  std::vector<Result> results;
  std::vector<TensorHistogram> histograms;
};

// After the last tensor of each checkpoint, a row per format (and a
// histogram) totalling its tensors; the records of a checkpoint must be
// consecutive.
void add_model_totals(AnalysisRun& run);

// The partial result file's text (JSON; doubles as hexadecimal floats, exact).
std::string partial_text(const AnalysisRun& run);
// Reads a partial result file; UsageError naming the file when it is damaged.
AnalysisRun read_partial(const std::string& path);
// The runs as one: options and version must agree and no tensor may appear
// twice (UsageError naming the files otherwise); records are ordered by
// checkpoint (or file when not from one), then file, then place in the file.
AnalysisRun merge_runs(std::vector<std::pair<std::string, AnalysisRun>> runs);

// Output files of `fmtcheck merge` (empty: not written), and the table it prints.
struct MergeOutputs {
  std::string csv, histogram_csv, json;
  bool full = false;  // analyze's --full table instead of the compact one and the verdict
};
// Prints and writes a merged run as `fmtcheck analyze` would have (defined
// beside analyze, whose outputs it shares).
int print_merged(AnalysisRun run, const MergeOutputs& outputs);

}  // namespace fmtcheck::cli
