// fmtcheck hw convert FORMAT: the GPU's cvt instruction against fmtcheck's
// conversion with the matching policy, on random or every float32 input,
// and the way back to fp32 on every code of the format.
#ifdef FMTCHECK_HAS_CUDA
#include <bit>
#include <cmath>
#include <fmt/format.h>

#include "common/options.hpp"
#include "fmtcheck/batch/convert_batch.hpp"
#include "fmtcheck/core/convert.hpp"
#include "fmtcheck/core/random.hpp"
#include "fmtcheck/cuda/convert.hpp"
#include "fmtcheck/cuda/device.hpp"
#include "fmtcheck/cuda/launch.hpp"
#include "hw/command.hpp"
#include "hw/report.hpp"

namespace fmtcheck::cli {
namespace {

struct ConvertArgs {
  std::string format, round = "rne";
  bool exhaustive = false;
  std::uint64_t random = 1 << 20, seed = 1;
  ReportOptions report;
};

// How a difference names its input: the float32 bits.
std::string input_text(float x) { return fmt::format("x=0x{:08x}", std::bit_cast<std::uint32_t>(x)); }

// GPU and emulator on `in`, into c: the emulator through convert_batch, with
// the hardware's own rule (expected_conversion) where it has one.
void compare_chunk(const cuda::DeviceConversion& conv, std::span<const float> in, cuda::Comparison& c) {
  const std::vector<std::uint32_t> hw = cuda::convert_on_device(conv, in);
  std::vector<std::uint32_t> emu(in.size());
  const Policy p = conv.policy();
  if (conv.target->storage_bits == 32) {
    convert_batch(in, *conv.target, p, std::span<std::uint32_t>(emu));
  } else {
    std::vector<std::uint16_t> e16(in.size());
    std::vector<std::uint8_t> e8(in.size());
    if (conv.target->storage_bits == 16) convert_batch(in, *conv.target, p, std::span<std::uint16_t>(e16));
    else convert_batch(in, *conv.target, p, std::span<std::uint8_t>(e8));
    for (std::size_t i = 0; i < in.size(); ++i) emu[i] = conv.target->storage_bits == 16 ? e16[i] : e8[i];
  }
  for (std::size_t i = 0; i < in.size(); ++i) {
    std::uint32_t expected = emu[i];
    if (std::isnan(in[i])) expected = cuda::expected_conversion(conv, std::bit_cast<std::uint32_t>(in[i]));
    c.check(hw[i], expected, [&] { return input_text(in[i]); });
  }
}

// Every code of the format back to fp32 (exact: fp32 holds them all).
cuda::Comparison compare_widening(const Format& f) {
  std::vector<std::uint32_t> codes;
  for (std::uint64_t code = 0; code <= f.code_mask(); ++code) codes.push_back(static_cast<std::uint32_t>(f.to_storage(code)));
  const std::vector<std::uint32_t> hw = cuda::widen_on_device(f, codes);
  cuda::Comparison c{f.name + " -> fp32", formats::fp32};
  for (std::size_t i = 0; i < codes.size(); ++i) {
    c.check(hw[i], cuda::expected_widening(f, codes[i]), [&] { return fmt::format("{}=0x{:x}", f.name, codes[i]); });
  }
  return c;
}

int run_convert(const ConvertArgs& a) {
  cuda::require_device();  // no GPU: one line, exit 2
  const Format f = parse_format_option(a.format);
  const auto rounding = parse_rounding(a.round);
  if (!rounding) throw UsageError("bad --round '" + a.round + "'");
  const cuda::DeviceConversion* conv = cuda::find_device_conversion(f, *rounding);
  if (!conv) {
    std::string have;
    for (const auto& c : cuda::device_conversions()) have += fmt::format("\n  {} --round {}", c.target->name, to_string(c.rounding));
    throw UsageError("the GPU has no cvt to " + f.name + " with --round " + a.round + "; it has:" + have);
  }
  cuda::Comparison forward{fmt::format("fp32 -> {} ({}, {})", f.name, conv->ptx, describe(conv->policy())), f};
  if (a.exhaustive) {
    // Every float32 in chunks of one launch.
    std::vector<float> in(cuda::max_elements_per_launch);
    for (std::uint64_t first = 0; first < (std::uint64_t{1} << 32); first += in.size()) {
      for (std::size_t i = 0; i < in.size(); ++i) in[i] = std::bit_cast<float>(static_cast<std::uint32_t>(first + i));
      compare_chunk(*conv, in, forward);
    }
  } else {
    std::vector<float> in;
    for (std::uint64_t i = 0; i < a.random; ++i) in.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(splitmix64(a.seed, i))));
    compare_chunk(*conv, in, forward);
  }
  return report({forward, compare_widening(f)}, a.report);
}

const bool registered = register_hw_command({
    "convert", "GPU cvt against the emulator: random or every float32 input, and every code back to fp32", 20,
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<ConvertArgs>();
      sub.add_option("FORMAT", a->format, "fp16, bf16, tf32, e4m3 or e5m2")->required();
      sub.add_option("--round", a->round, "rne, rtz, rup, rdn (fp16); rne, rtz (bf16); rna, rne, rtz (tf32); rne (fp8)")
          ->capture_default_str();
      auto* ex = sub.add_flag("--exhaustive", a->exhaustive, "every float32 input (2^32)");
      sub.add_option("--random", a->random, "random float32 bit patterns")->capture_default_str()->excludes(ex);
      sub.add_option("--seed", a->seed, "seed of the random inputs")->capture_default_str();
      add_report_options(sub, a->report);
      return [a] { return run_convert(*a); };
    }});

}  // namespace
}  // namespace fmtcheck::cli
#endif
