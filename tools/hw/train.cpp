// fmtcheck hw train: the digits MLP trained twice by the library's training
// step (the one `fmtcheck train` runs), once with the GPU's cvt and mma.sync
// and once with the emulator's conversions and GEMMs under the GPU's model,
// from the same weights on the same batches; a per-step CSV puts the loss
// scale, skipped step and gradient underflow and overflow counts of both
// side by side, and says whether the step (its loss and every weight after
// it) agrees bit for bit. After a first difference the two runs go apart.
#ifdef FMTCHECK_HAS_CUDA
#include <bit>
#include <fmt/format.h>
#include <optional>

#include "common/bundled_data.hpp"
#include "common/options.hpp"
#include "common/output_file.hpp"
#include "common/table.hpp"
#include "fmtcheck/cuda/device.hpp"
#include "fmtcheck/cuda/mma_cases.hpp"
#include "fmtcheck/cuda/train.hpp"
#include "fmtcheck/train/digits.hpp"
#include "fmtcheck/train/trainer.hpp"
#include "hw/command.hpp"

namespace fmtcheck::cli {
namespace {

struct TrainArgs {
  std::size_t steps = 100;
  std::string half = "fp16", data, csv;
  train::TrainConfig config;
  std::size_t show = 10;
};

std::size_t differing_weights(train::Model& a, train::Model& b) {
  const std::vector<train::Parameter*> pa = a.parameters(), pb = b.parameters();
  std::size_t n = 0;
  for (std::size_t p = 0; p < pa.size(); ++p) {
    for (std::size_t i = 0; i < pa[p]->value.size(); ++i) {
      n += std::bit_cast<std::uint32_t>(pa[p]->value[i]) != std::bit_cast<std::uint32_t>(pb[p]->value[i]);
    }
  }
  return n;
}

std::uint64_t total(const train::StepRecord& s, Flag f) {
  std::uint64_t n = 0;
  for (const auto& [name, t] : s.tensors) n += t.flags[f];
  return n;
}

std::string bits(float v) { return fmt::format("{} ({:08x})", v, std::bit_cast<std::uint32_t>(v)); }

int run_train(TrainArgs& a) {
  const cuda::DeviceInfo device = cuda::require_device();  // no GPU: one line, exit 2
  // The GPU side casts with cvt.rn and multiplies with mma.sync in fp16 or
  // bf16 (the autocast recipes of those formats and their pure variants,
  // whose weight storage is the optimizer's, CPU code either way), or in
  // tf32 from fp32 registers (the tf32 recipe; not tf32-rne, whose rounded
  // operands this step does not make).
  const std::optional<train::Recipe> found = train::find_recipe(a.half);
  const bool runs = found && found->forward != nullptr && found->scaling == train::TensorScaling::none &&
                    (*found->forward == formats::fp16 || *found->forward == formats::bf16 ||
                     (*found->forward == formats::tf32 && found->operand_policy.rounding == Rounding::rtz));
  if (!runs || a.config.batch == 0 || a.steps == 0) {
    throw UsageError("hw train takes --half fp16, bf16, tf32 (not tf32-rne) or a pure recipe of fp16 or bf16 "
                     "(bf16-pure, bf16-pure-sr, bf16-pure-kahan, bf16-pure-fp32-states, fp16-pure...), --batch >= 1 "
                     "and --steps >= 1");
  }
  const train::Recipe recipe = *found;
  const Format half = *recipe.forward;
  const std::string data_path = a.data.empty() ? bundled_data("digits/digits.csv.gz", "--data") : a.data;
  train::DigitsSplit data;
  try {
    data = train::split_digits(train::read_digits(data_path));
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  const cuda::ModelChoice choice =
      cuda::model_for(*cuda::find_mma_instruction(half, formats::fp32), device.compute_capability());
  if (!choice.model) throw UsageError("no model to compare with: " + choice.known_gap);
  cuda::DeviceOps hardware_ops;
  train::EmulatedOps emulator_ops(*choice.model);
  train::DigitsMlp hardware_model(data.train, data.held_out, a.config.seed);
  train::DigitsMlp emulator_model(data.train, data.held_out, a.config.seed);
  train::Trainer hardware(recipe, a.config, hardware_model, hardware_ops);
  train::Trainer emulator(recipe, a.config, emulator_model, emulator_ops);

  Table table({"step", "loss_scale_hw", "loss_scale_emu", "skipped_hw", "skipped_emu", "underflow_hw",
               "underflow_emu", "overflow_hw", "overflow_emu", "loss_hw", "loss_emu", "weights_differing", "agree"});
  std::size_t disagreeing = 0, skipped = 0;
  std::optional<std::size_t> first_difference;
  float last_loss = 0;
  for (std::size_t step = 0; step < a.steps; ++step) {
    const train::StepRecord hw = hardware.step();
    const train::StepRecord emu = emulator.step();
    const std::size_t weights = differing_weights(hardware_model, emulator_model);
    const std::uint64_t under_hw = total(hw, Flag::tiny_to_zero), under_emu = total(emu, Flag::tiny_to_zero);
    const std::uint64_t over_hw = total(hw, Flag::overflow), over_emu = total(emu, Flag::overflow);
    const bool agree = weights == 0 && std::bit_cast<std::uint32_t>(hw.loss) == std::bit_cast<std::uint32_t>(emu.loss) &&
                       hw.skipped == emu.skipped && under_hw == under_emu && over_hw == over_emu &&
                       hw.loss_scale == emu.loss_scale;
    table.add_row({std::to_string(step), shortest(hw.loss_scale), shortest(emu.loss_scale), hw.skipped ? "1" : "0",
                   emu.skipped ? "1" : "0", std::to_string(under_hw), std::to_string(under_emu), std::to_string(over_hw),
                   std::to_string(over_emu), bits(hw.loss), bits(emu.loss), std::to_string(weights), agree ? "yes" : "no"});
    if (!agree) {
      if (!first_difference) first_difference = step;
      if (disagreeing++ < a.show) {
        fmt::print("{}", wrap(fmt::format("step {}: ", step),
                              fmt::format("hardware and emulator differ: loss {} vs {}, {} weights differ, skipped {} vs {}",
                                          bits(hw.loss), bits(emu.loss), weights, hw.skipped, emu.skipped),
                              terminal_width));
      }
    }
    skipped += hw.skipped ? 1 : 0;
    last_loss = hw.loss;
  }
  if (!a.csv.empty()) {
    OutputFile file(a.csv);
    file.write(table.csv());
    file.commit();
  }
  // The run, then its counts on indented lines (joined to it again by
  // cuda/run-hardware-comparison.sh's summary).
  fmt::print("{}", wrap("", fmt::format("{} training on {} vs emulator ({}), {} steps of batch {}:", recipe.name,
                                        device.name, choice.model->name, a.steps, a.config.batch),
                        terminal_width));
  fmt::print("{}", wrap("  ",
                        fmt::format("{} steps agree bit for bit, {} differ{}; {} skipped; last loss {}, loss scale {}",
                                    a.steps - disagreeing, disagreeing,
                                    first_difference ? fmt::format(" (the first at step {})", *first_difference) : "",
                                    skipped, last_loss, hardware.loss_scale()),
                        terminal_width));
  fmt::print("{}\n", disagreeing == 0 ? "PASS: every step agrees bit for bit" : "FAIL: steps differ");
  return disagreeing == 0 ? 0 : 1;
}

const bool registered = register_hw_command({
    "train", "the digits MLP trained with the GPU's cvt and mma.sync and with the emulator (per-step CSV)", 50,
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<TrainArgs>();
      a->config.optimizer.momentum = 0.0f;  // plain SGD unless asked
      sub.add_option("--steps", a->steps, "training steps")->capture_default_str();
      sub.add_option("--half", a->half,
                     "recipe: fp16 (GradScaler), bf16, tf32, or the pure variants FMT-pure, -sr, -kahan, -fp32-states")
          ->capture_default_str();
      sub.add_option("--sr-bits", a->config.recipe.sr_bits, "-sr recipes: random bits per stochastic rounding")
          ->capture_default_str();
      sub.add_option("--sr-seed", a->config.recipe.sr_seed, "-sr recipes: seed of the random stream")->capture_default_str();
      sub.add_option("--data", a->data, "digits CSV, gzip or plain (default: the bundled data/digits/digits.csv.gz, found beside the executable)");
      sub.add_option("--batch", a->config.batch, "images per step")->capture_default_str();
      sub.add_option("--lr", a->config.optimizer.lr, "SGD learning rate")->capture_default_str();
      sub.add_option("--momentum", a->config.optimizer.momentum, "SGD momentum")->capture_default_str();
      sub.add_option("--init-scale", a->config.recipe.scaler.init_scale, "GradScaler's initial loss scale")
          ->capture_default_str();
      sub.add_option("--growth-interval", a->config.recipe.scaler.growth_interval,
                     "finite steps before the scale doubles")->capture_default_str();
      sub.add_option("--seed", a->config.seed, "seed of the initial weights")->capture_default_str();
      sub.add_option("--csv", a->csv, "write the per-step table as CSV ('-': standard output)");
      sub.add_option("--show", a->show, "differing steps listed")->capture_default_str();
      return [a] { return run_train(*a); };
    }});

}  // namespace
}  // namespace fmtcheck::cli
#endif
