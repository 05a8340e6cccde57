// Partial result files (`analyze --partial`, read by `merge`): a damaged
// file must give UsageError. One that reads must merge with itself
// (refused: every tensor twice, when it has any), get its whole-model
// totals, and survive a write and read back unchanged.
#include "common/analysis_partial.hpp"
#include "common/usage_error.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fmtcheck;
  const fuzz::InputFile file("input.partial.json", fuzz::text(data, size));
  cli::AnalysisRun run;
  try {
    run = cli::read_partial(file.path());
  } catch (const cli::UsageError&) {
    return 0;
  }
  const std::string text = cli::partial_text(run);
  const fuzz::InputFile again("again.partial.json", text);
  if (cli::partial_text(cli::read_partial(again.path())) != text) __builtin_trap();  // not a faithful round trip
  try {
    (void)cli::merge_runs({{"a", run}, {"b", run}});
    if (!run.histograms.empty()) __builtin_trap();  // the same tensors twice were merged
  } catch (const cli::UsageError&) {
  }
  cli::AnalysisRun merged = cli::merge_runs({{"a", run}});
  cli::add_model_totals(merged);
  return 0;
}
