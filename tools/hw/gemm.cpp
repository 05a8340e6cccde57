// fmtcheck hw gemm: one cuBLASLt GEMM on random operands against the
// emulated GEMM under this GPU's tensor-core model. With FAST_ACCUM off
// (FP8), cuBLASLt's promotion interval is not published: each candidate
// interval is emulated and the first that explains every output is named.
#ifdef FMTCHECK_HAS_CUDA
#include <fmt/format.h>

#include "common/options.hpp"
#include "fmtcheck/cuda/blaslt_gemm.hpp"
#include "common/output_file.hpp"
#include "fmtcheck/cuda/device.hpp"
#include "fmtcheck/cuda/gemm_case_file.hpp"
#include "fmtcheck/cuda/mma_cases.hpp"
#include "hw/command.hpp"
#include "hw/report.hpp"

namespace fmtcheck::cli {
namespace {

struct GemmArgs {
  std::string type = "fp16", out = "fp32";
  bool fast_accum = false;
  float scale_a = 1, scale_b = 1, scale_d = 1;
  std::size_t m = 128, n = 128, k = 256;
  std::uint64_t seed = 1;
  ReportOptions report;
  std::string cases;  // file for the top-left 32×32 block with the hardware's D; empty: none
};

// The preset of the wgmma/mma.sync instruction cuBLASLt runs on this GPU, and
// its arithmetic for `input`.
struct ModelHere {
  std::string name;
  DotModel model;
};
ModelHere model_here(const Format& input, int cc) {
  const cuda::MmaFamily family = cc >= 90 && cc < 100 ? cuda::MmaFamily::wgmma : cuda::MmaFamily::mma_sync;
  const cuda::MmaInstruction* ins = cuda::find_mma_instruction(input, formats::fp32, family);
  const cuda::ModelChoice choice = ins ? cuda::model_for(*ins, cc) : cuda::ModelChoice{};
  if (!choice.model) throw UsageError("no tensor-core model for " + input.name + " GEMMs on this GPU");
  return {choice.model->name, *choice.model->for_input(input)};
}

int run_gemm(const GemmArgs& a) {
  const cuda::DeviceInfo device = cuda::require_device();  // no GPU: one line, exit 2
  cuda::BlasLtGemm g;
  const Format in = parse_format_option(a.type), out = parse_format_option(a.out);
  g.input = &in;
  g.output = &out;
  g.fast_accum = a.fast_accum;
  g.scale_a = a.scale_a;
  g.scale_b = a.scale_b;
  g.scale_d = a.scale_d;
  const cuda::GemmOperands x = cuda::make_gemm_operands(g, a.m, a.n, a.k, a.seed);
  try {
    cuda::check_gemm(g, x);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  const auto [model_name, model] = model_here(in, device.compute_capability());
  std::string split_k;
  const std::vector<std::uint32_t> hardware = cuda::run_blaslt_gemm(g, x, &split_k);
  const std::string base = fmt::format("cuBLASLt {} M={} N={} K={} ({})", g.name(), a.m, a.n, a.k, split_k);

  // FAST_ACCUM and non-FP8 GEMMs: the whole K on the tensor core. Otherwise
  // the candidates in turn; the first without a difference explains it.
  const std::vector<std::size_t> tries =
      g.fp8() && !g.fast_accum ? cuda::promotion_candidates(a.k) : std::vector<std::size_t>{0};
  std::vector<cuda::Comparison> all;
  std::size_t explained_by = tries.back();
  for (const std::size_t every : tries) {
    const std::string how = every == 0 || every >= a.k ? "no promotion" : fmt::format("promotion every {}", every);
    cuda::Comparison c = cuda::compare_gemm(g, x, hardware, cuda::emulate_blaslt_gemm(g, model, every, x),
                                            base + " vs emulated GEMM, " + how);
    const bool explained = c.differing == 0;
    all.push_back(std::move(c));
    if (explained) {
      explained_by = every;
      break;
    }
  }
  // Candidates that did not fit are a search, not a finding: only the last
  // one counts when none fits.
  for (std::size_t i = 0; i + 1 < all.size(); ++i) all[i].known_gap = "a promotion interval tried and rejected";
  const int status = report(all, a.report);
  if (!a.cases.empty()) {
    // 1024 outputs with their operands: enough to replay, small enough to commit.
    const std::size_t interval = explained_by >= a.k ? 0 : explained_by;
    OutputFile file(a.cases);
    file.write(cuda::gemm_cases_text(cuda::gemm_block(g, model_name, interval, x, hardware, std::min<std::size_t>(32, a.m),
                                                      std::min<std::size_t>(32, a.n))));
    file.commit();
  }
  return status;
}

const bool registered = register_hw_command({
    "gemm", "one cuBLASLt GEMM (fp16, bf16, tf32, FP8 with scales and fast accumulation) against the emulated GEMM", 35,
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<GemmArgs>();
      sub.add_option("--type", a->type, "A and B: fp16, bf16, tf32 or e4m3")->capture_default_str();
      sub.add_option("--out", a->out, "D: fp32, or e4m3 for e4m3 inputs (then --scale-d applies)")->capture_default_str();
      sub.add_flag("--fast-accum", a->fast_accum, "FP8: CUBLASLT_MATMUL_DESC_FAST_ACCUM on (no promotion)");
      sub.add_option("--scale-a", a->scale_a, "FP8: the A scale (device pointer)")->capture_default_str();
      sub.add_option("--scale-b", a->scale_b, "FP8: the B scale")->capture_default_str();
      sub.add_option("--scale-d", a->scale_d, "FP8 with e4m3 output: the D scale")->capture_default_str();
      sub.add_option("--cases", a->cases,
                     "also write the top-left 32x32 block (operands, the hardware's D, the promotion interval that "
                     "explained it) to this file, for replay without a GPU");
      sub.add_option("--m", a->m, "rows of A and D")->capture_default_str();
      sub.add_option("--n", a->n, "columns of B and D")->capture_default_str();
      sub.add_option("--k", a->k, "columns of A, rows of B")->capture_default_str();
      sub.add_option("--seed", a->seed, "seed of the operands")->capture_default_str();
      add_report_options(sub, a->report);
      return [a] { return run_gemm(*a); };
    }});

}  // namespace
}  // namespace fmtcheck::cli
#endif
