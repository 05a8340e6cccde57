// fmtcheck hw train: a mixed-precision MLP trained with the GPU's cvt and
// mma.sync, each step replayed by the emulator from the same state; a
// per-step CSV puts the loss scale, skipped step and gradient underflow and
// overflow counts of both side by side, and says whether the step (its
// loss and every updated weight) agrees bit for bit.
#ifdef FMTCHECK_HAS_CUDA
#include <bit>
#include <fmt/format.h>

#include "common/options.hpp"
#include "common/output_file.hpp"
#include "common/table.hpp"
#include "fmtcheck/cuda/device.hpp"
#include "fmtcheck/cuda/mma_cases.hpp"
#include "fmtcheck/cuda/train.hpp"
#include "hw/command.hpp"

namespace fmtcheck::cli {
namespace {

struct TrainArgs {
  std::size_t steps = 100;
  std::string half = "fp16", data, csv;
  std::size_t batch = 32;
  float learning_rate = 0.05f, init_scale = 65536.0f;
  int growth_interval = 2000;
  std::uint64_t seed = 0;
  std::size_t show = 10;
};

std::size_t differing_bits(const std::vector<float>& a, const std::vector<float>& b) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < a.size(); ++i) n += std::bit_cast<std::uint32_t>(a[i]) != std::bit_cast<std::uint32_t>(b[i]);
  return n;
}

std::string bits(float v) { return fmt::format("{} ({:08x})", v, std::bit_cast<std::uint32_t>(v)); }

int run_train(const TrainArgs& a) {
  const cuda::DeviceInfo device = cuda::require_device();  // no GPU: one line, exit 2
  const Format half = parse_format_option(a.half);
  cuda::TrainConfig config;
  config.half = &half;
  config.batch = a.batch;
  config.learning_rate = a.learning_rate;
  if ((half != formats::fp16 && half != formats::bf16) || a.batch == 0 || a.batch % 16 != 0 || a.steps == 0) {
    throw UsageError("hw train takes --half fp16 or bf16, a --batch that is a multiple of 16 and --steps >= 1");
  }
  if (a.data.empty()) throw UsageError("--data is required (digits CSV; see docs/hardware.md)");
  cuda::Digits data;
  try {
    data = cuda::read_digits_csv(a.data);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  const cuda::ModelChoice choice =
      cuda::model_for(*cuda::find_mma_instruction(half, formats::fp32), device.compute_capability());
  if (!choice.model) throw UsageError("no model to compare with: " + choice.known_gap);
  cuda::DeviceOps hardware;
  cuda::EmulatedOps emulator(*choice.model->for_input(half));

  Table table({"step", "loss_scale_hw", "loss_scale_emu", "skipped_hw", "skipped_emu", "underflow_hw",
               "underflow_emu", "overflow_hw", "overflow_emu", "loss_hw", "loss_emu", "weights_differing", "agree"});
  cuda::Mlp mlp = cuda::initial_mlp(a.seed);
  GradScalerConfig scaler_config;
  scaler_config.init_scale = a.init_scale;
  scaler_config.growth_interval = a.growth_interval;
  GradScaler scaler(scaler_config);
  std::size_t disagreeing = 0, skipped = 0;
  float last_loss = 0;
  for (std::size_t step = 0; step < a.steps; ++step) {
    cuda::Mlp replayed = mlp;
    GradScaler replayed_scaler = scaler;
    const std::size_t first = step * a.batch;
    const cuda::StepResult hw = cuda::train_step(hardware, config, data, first, mlp, scaler);
    const cuda::StepResult emu = cuda::train_step(emulator, config, data, first, replayed, replayed_scaler);
    const std::size_t weights = differing_bits(mlp.w1, replayed.w1) + differing_bits(mlp.b1, replayed.b1) +
                                differing_bits(mlp.w2, replayed.w2) + differing_bits(mlp.b2, replayed.b2);
    const bool agree = weights == 0 && std::bit_cast<std::uint32_t>(hw.loss) == std::bit_cast<std::uint32_t>(emu.loss) &&
                       hw.skipped == emu.skipped && hw.underflow == emu.underflow && hw.overflow == emu.overflow &&
                       scaler.scale() == replayed_scaler.scale();
    table.add_row({std::to_string(step), fmt::format("{}", hw.scale), fmt::format("{}", emu.scale),
                   hw.skipped ? "1" : "0", emu.skipped ? "1" : "0", std::to_string(hw.underflow),
                   std::to_string(emu.underflow), std::to_string(hw.overflow), std::to_string(emu.overflow),
                   bits(hw.loss), bits(emu.loss), std::to_string(weights), agree ? "yes" : "no"});
    if (!agree && disagreeing++ < a.show) {
      fmt::print("step {}: hardware and emulator differ: loss {} vs {}, {} weights differ, skipped {} vs {}\n", step,
                 bits(hw.loss), bits(emu.loss), weights, hw.skipped, emu.skipped);
    }
    skipped += hw.skipped ? 1 : 0;
    last_loss = hw.loss;
  }
  if (!a.csv.empty()) {
    OutputFile file(a.csv);
    file.write(table.csv());
    file.commit();
  }
  fmt::print("{}", wrap(fmt::format("{} training, ", half.name),
                        fmt::format("{} steps of batch {} on {} vs emulator ({}): {} steps agree bit for bit, {} differ; "
                                    "{} skipped; last loss {}, loss scale {}",
                                    a.steps, a.batch, device.name, choice.model->name, a.steps - disagreeing,
                                    disagreeing, skipped, last_loss, scaler.scale()),
                        terminal_width));
  fmt::print("{}\n", disagreeing == 0 ? "PASS: every step agrees bit for bit" : "FAIL: steps differ");
  return disagreeing == 0 ? 0 : 1;
}

const bool registered = register_hw_command({
    "train", "a mixed-precision MLP trained on the GPU, each step replayed by the emulator (per-step CSV)", 50,
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<TrainArgs>();
      sub.add_option("--steps", a->steps, "training steps")->capture_default_str();
      sub.add_option("--half", a->half, "tensor-core operand format: fp16 or bf16")->capture_default_str();
      sub.add_option("--data", a->data, "digits CSV (64 pixel values 0..16 and a label per line)");
      sub.add_option("--batch", a->batch, "images per step (a multiple of 16)")->capture_default_str();
      sub.add_option("--lr", a->learning_rate, "SGD learning rate")->capture_default_str();
      sub.add_option("--init-scale", a->init_scale, "GradScaler's initial loss scale")->capture_default_str();
      sub.add_option("--growth-interval", a->growth_interval, "finite steps before the scale doubles")
          ->capture_default_str();
      sub.add_option("--seed", a->seed, "seed of the initial weights")->capture_default_str();
      sub.add_option("--csv", a->csv, "write the per-step table as CSV ('-': standard output)");
      sub.add_option("--show", a->show, "differing steps listed")->capture_default_str();
      return [a] { return run_train(*a); };
    }});

}  // namespace
}  // namespace fmtcheck::cli
#endif
