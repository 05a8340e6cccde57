// fmtcheck merge: the partial results of several `fmtcheck analyze
// --partial` runs (over different files or shards, on different machines)
// printed as one run over all their inputs, byte for byte.
#include "common/analysis_partial.hpp"
#include "common/command.hpp"

namespace fmtcheck::cli {
namespace {

struct MergeArgs {
  std::vector<std::string> partials;
  MergeOutputs outputs;
};

int run_merge(const MergeArgs& args) {
  std::vector<std::pair<std::string, AnalysisRun>> runs;
  for (const std::string& path : args.partials) runs.emplace_back(path, read_partial(path));
  return print_merged(merge_runs(std::move(runs)), args.outputs);
}

const bool registered = register_command({
    "merge", "the partial results of analyze --partial runs, printed as one run over all their inputs", 71,
    [](CLI::App& sub) {
      auto args = std::make_shared<MergeArgs>();
      sub.add_option("PARTIAL", args->partials, "files written by fmtcheck analyze --partial (same options and version)")->required();
      sub.add_option("--csv", args->outputs.csv, "tidy CSV: file,tensor,format,scale,measure,value");
      sub.add_option("--histogram-csv", args->outputs.histogram_csv, "tidy CSV of the input binades: file,tensor,binade,count");
      sub.add_option("--json", args->outputs.json, "everything as JSON");
      sub.add_flag("--full", args->outputs.full, "analyze's --full table (one row per tensor and format) instead of the compact one");
      return std::function<int()>([=] { return run_merge(*args); });
    }});

}  // namespace
}  // namespace fmtcheck::cli
