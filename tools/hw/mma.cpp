// fmtcheck hw mma: one tensor-core instruction (mma.sync or wgmma) on random, power-of-two and
// special-value tiles, against the model of that instruction on this GPU.
#ifdef FMTCHECK_HAS_CUDA
#include <fmt/format.h>

#include "fmtcheck/cuda/device.hpp"
#include "fmtcheck/cuda/mma_cases.hpp"
#include "hw/case_files.hpp"
#include "hw/command.hpp"
#include "hw/instruction.hpp"
#include "hw/report.hpp"

namespace fmtcheck::cli {
namespace {

struct MmaArgs {
  InstructionOptions instruction;
  std::string model;  // empty: the one model_for picks
  std::size_t random = 64;
  std::uint64_t seed = 1;
  ReportOptions report;
  std::string cases;  // folder for the cases in the published layout; empty: none
  std::string tag;    // the GPU's name in the case files' names
};

int run_mma(const MmaArgs& a) {
  const cuda::DeviceInfo d = cuda::require_device();  // no GPU: one line, exit 2
  const cuda::MmaInstruction& ins = instruction_from(a.instruction);
  cuda::ModelChoice choice = cuda::model_for(ins, d.compute_capability());
  if (!a.model.empty()) {
    choice = {find_tensor_core_model(a.model), "compared with --model " + a.model + " by request"};
    if (!choice.model) throw UsageError("unknown --model '" + a.model + "'");
  }
  if (!choice.model) throw UsageError("no model to compare with: " + choice.known_gap);
  const std::optional<DotModel> model = choice.model->for_input(*ins.input);
  if (!model) throw UsageError("model '" + choice.model->name + "' has no arithmetic for " + ins.input->name);

  std::vector<cuda::Comparison> all;
  std::vector<MeasuredTiles> measured;
  const std::pair<cuda::CaseKind, const char*> kinds[] = {
      {cuda::CaseKind::random, "random"}, {cuda::CaseKind::powers, "powers of two"}, {cuda::CaseKind::specials, "special values"}};
  for (const auto& [kind, name] : kinds) {
    MeasuredTiles m{cuda::make_tiles(ins, kind, a.random, a.seed), {}, {}};
    m.hardware = cuda::run_mma(ins, m.tiles);
    m.emulator = cuda::emulate_tiles(ins, *model, m.tiles);
    cuda::Comparison c = cuda::compare_tiles(ins, m.tiles, m.hardware, m.emulator,
                                             fmt::format("{} vs {}, {} tiles", ins.ptx, choice.model->name, name));
    c.known_gap = choice.known_gap;
    all.push_back(std::move(c));
    measured.push_back(std::move(m));
  }
  const int status = report(all, a.report);
  // 512 outputs of each kind and up to 1024 differing ones: a few thousand
  // cases, the size of one published file.
  if (!a.cases.empty()) write_case_files(a.cases, a.tag.empty() ? "gpu" : a.tag, ins, measured, 512, 1024);
  return status;
}

const bool registered = register_hw_command({
    "mma", "one mma.sync or wgmma instruction on random and adversarial tiles against its tensor-core model", 30,
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<MmaArgs>();
      add_instruction_options(sub, a->instruction);
      sub.add_option("--random", a->random, "tiles per kind (random, powers of two, special values); 128 outputs each (wgmma: 512)")
          ->capture_default_str();
      sub.add_option("--seed", a->seed, "seed of the tiles")->capture_default_str();
      sub.add_option("--model", a->model, "compare with this preset instead of the GPU's own (differences then count as known)");
      add_report_options(sub, a->report);
      sub.add_option("--cases", a->cases,
                     "also write the cases (inputs and the hardware's D) to this folder, one subfolder per input type, "
                     "in the layout `fmtcheck mma --check` reads");
      sub.add_option("--tag", a->tag, "the GPU's name in the case files' names (a_TAG_e4m3.txt...)")->capture_default_str();
      return [a] { return run_mma(*a); };
    }});

}  // namespace
}  // namespace fmtcheck::cli
#endif
