// On a GPU: the hardware against the emulator. Every conversion the device
// has, on every float32 input of a strided sweep plus the boundaries; every
// mma.sync instruction with a published model on random, power-of-two and
// special tiles (wgmma on sm_90); the probes on the hardware against the
// model; a cuBLASLt fp16 GEMM against the emulated GEMM; training steps
// replayed by the emulator.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <limits>

#include "fmtcheck/core/convert.hpp"
#include "fmtcheck/cuda/blaslt_gemm.hpp"
#include "fmtcheck/cuda/convert.hpp"
#include "fmtcheck/cuda/device.hpp"
#include "fmtcheck/cuda/mma_cases.hpp"
#include "fmtcheck/cuda/probe.hpp"
#include "fmtcheck/cuda/train.hpp"

using namespace fmtcheck;
using namespace fmtcheck::cuda;

namespace {

int capability() { return require_device().compute_capability(); }

}  // namespace

TEST_CASE("hardware conversions match the emulator on every 4093rd float32") {
  std::vector<float> in;
  for (std::uint64_t b = 0; b < (std::uint64_t{1} << 32); b += 4093) in.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(b)));
  for (const float x : {0.0f, -0.0f, 65504.0f, 65520.0f, 448.0f, 464.0f, 57344.0f, 61440.0f,
                        std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                        std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::denorm_min()}) {
    in.push_back(x);
  }
  for (const DeviceConversion& conv : device_conversions()) {
    if (conv.min_compute_capability > capability()) continue;
    CAPTURE(conv.ptx);
    const std::vector<std::uint32_t> hw = convert_on_device(conv, in);
    std::size_t differ = 0;
    for (std::size_t i = 0; i < in.size(); ++i) differ += hw[i] != expected_conversion(conv, std::bit_cast<std::uint32_t>(in[i]));
    CHECK(differ == 0);
  }
}

TEST_CASE("mma.sync matches its published model") {
  for (const MmaInstruction& ins : mma_instructions()) {
    if (!ins.runs_on(capability())) continue;
    const ModelChoice choice = model_for(ins, capability());
    if (!choice.model || !choice.known_gap.empty()) continue;  // nothing published to hold the hardware to
    CAPTURE(ins.ptx);
    const DotModel model = *choice.model->for_input(*ins.input);
    for (const CaseKind kind : {CaseKind::random, CaseKind::powers, CaseKind::specials}) {
      const MmaTiles tiles = make_tiles(ins, kind, 64, 1);
      const Comparison c = compare_tiles(ins, tiles, run_mma(ins, tiles), emulate_tiles(ins, model, tiles), "mma");
      CHECK(c.differing == 0);
    }
  }
}

TEST_CASE("the probes on the hardware find the published model's parameters") {
  for (const MmaInstruction& ins : mma_instructions()) {
    if (!ins.runs_on(capability())) continue;
    const ModelChoice choice = model_for(ins, capability());
    if (!choice.model || !choice.known_gap.empty()) continue;
    CAPTURE(ins.ptx);
    const ProbeTarget target{*ins.input, *ins.output, ins.k()};
    const DotModel model = *choice.model->for_input(*ins.input);
    const InferredArithmetic found = infer_arithmetic(target, mma_oracle(ins));
    const InferredArithmetic expected = infer_arithmetic(target, model_oracle(model, target));
    for (const ParameterRow& row : compare_with_model(target, found, model, expected)) {
      CAPTURE(row.parameter);
      CAPTURE(row.inferred);
      CHECK(row.agrees);
    }
  }
}

TEST_CASE("a cuBLASLt fp16 GEMM matches the emulated GEMM under this GPU's model") {
  const int cc = capability();
  const MmaFamily family = cc >= 90 && cc < 100 ? MmaFamily::wgmma : MmaFamily::mma_sync;
  const ModelChoice choice = model_for(*find_mma_instruction(formats::fp16, formats::fp32, family), cc);
  REQUIRE(choice.model != nullptr);
  const BlasLtGemm g;  // fp16 -> fp32
  const GemmOperands x = make_gemm_operands(g, 64, 64, 128, 5);
  const Comparison c = compare_gemm(g, x, run_blaslt_gemm(g, x),
                                    emulate_blaslt_gemm(g, *choice.model->for_input(formats::fp16), 0, x), "gemm");
  CHECK(c.differing == 0);
}

TEST_CASE("training steps on the GPU are replayed bit for bit by the emulator") {
  const ModelChoice choice = model_for(*find_mma_instruction(formats::fp16, formats::fp32), capability());
  REQUIRE(choice.model != nullptr);
  Digits data;  // class c lights pixels 6c .. 6c+5
  for (int i = 0; i < 64; ++i) {
    for (int p = 0; p < 64; ++p) data.pixels.push_back(p / 6 == i % 10 ? 1.0f : 0.125f);
    data.labels.push_back(i % 10);
  }
  DeviceOps hardware;
  EmulatedOps emulator(*choice.model->for_input(formats::fp16));
  Mlp mlp = initial_mlp(0);
  GradScaler scaler;
  for (std::size_t step = 0; step < 3; ++step) {
    Mlp replayed = mlp;
    GradScaler replayed_scaler = scaler;
    const StepResult hw = train_step(hardware, TrainConfig{}, data, step * 32, mlp, scaler);
    const StepResult emu = train_step(emulator, TrainConfig{}, data, step * 32, replayed, replayed_scaler);
    CHECK(std::bit_cast<std::uint32_t>(hw.loss) == std::bit_cast<std::uint32_t>(emu.loss));
    CHECK(hw.underflow == emu.underflow);
    CHECK(mlp.w1 == replayed.w1);
    CHECK(mlp.w2 == replayed.w2);
  }
}
