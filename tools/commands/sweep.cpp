// fmtcheck sweep: the result of every float32 input, as a raw file that
// anyone's cast kernel can be compared with.
#include "common/command.hpp"
#include "common/float32_sweep.hpp"
#include "common/options.hpp"
#include "common/output_file.hpp"
#include "common/progress.hpp"

namespace fmtcheck::cli {
namespace {

struct SweepArgs {
  std::string to;
  std::string out;
  PolicyOptions policy;
  std::uint64_t seed = 0;
  std::string device = "cpu";
};

int run_sweep(const SweepArgs& args) {
  const Format to = parse_format_option(args.to);
  const Policy policy = policy_from_text(args.policy);
  const Device device = parse_device_option(args.device);
  OutputFile out(args.out);
  out.reserve(kFloat32Count * static_cast<std::uint64_t>(to.storage_bits / 8));
  Progress progress("sweep " + to.name, kFloat32Count);
  sweep_float32(to, policy, args.seed, device, [&](std::uint64_t first, std::span<const std::uint8_t> bytes) {
    out.write(bytes.data(), bytes.size());
    progress.update(first + kSweepChunk);
  });
  out.commit();
  return 0;
}

const bool registered = register_command({
    "sweep", "convert every float32 bit pattern in order and write the raw results", 40, [](CLI::App& sub) {
      auto args = std::make_shared<SweepArgs>();
      sub.add_option("--to", args->to, "target format")->required();
      sub.add_option("--out", args->out,
                     "output file, or - for stdout: little-endian, 1, 2, 4 or 8 bytes per input (tf32 in a float32 "
                     "container), no header")
          ->required();
      add_policy_options(sub, args->policy, false);
      sub.add_option("--seed", args->seed, "stochastic rounding: input i draws RandomStream{seed}.draw(i), half of splitmix64(seed, i / 2)");
      add_device_option(sub, args->device);
      sub.footer("Defaults: rne, nosat, keep, ieee. 2^32 results: 4 GiB for an 8-bit format.");
      return std::function<int()>([=] { return run_sweep(*args); });
    }});

}  // namespace
}  // namespace fmtcheck::cli
