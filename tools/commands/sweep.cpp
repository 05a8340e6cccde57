// fmtcheck sweep: the result of every float32 input, as a raw file that
// anyone's cast kernel can be compared with, or (--digest) summed up in a
// digest and the flag counts, to compare two devices or builds at a glance.
#include <cstdio>
#include <string>

#include "common/command.hpp"
#include "common/float32_sweep.hpp"
#include "common/options.hpp"
#include "common/output_file.hpp"
#include "common/progress.hpp"
#include "common/usage_error.hpp"

namespace fmtcheck::cli {
namespace {

struct SweepArgs {
  std::string to;
  std::string out;
  PolicyOptions policy;
  std::uint64_t seed = 0;
  std::string device = "cpu";
  bool digest = false;
};

// The digest and the counts, then what they are for.
int print_digest(const SweepArgs& args, const Format& to, const Policy& policy, Device device) {
  const Float32Sweep s = digest_float32(to, policy, args.seed, device);
  std::printf("every float32 into %s (%s), on the %s:\n", to.name.c_str(), describe(policy).c_str(),
              device == Device::cuda ? "GPU" : "CPU");
  std::printf("  digest %016llx over %llu inputs\n", static_cast<unsigned long long>(s.digest),
              static_cast<unsigned long long>(s.flags.values));
  std::string line = " ";
  for (int i = 0; i < flag_count; ++i) {
    const std::string item = " " + std::string(to_string(static_cast<Flag>(i))) + " " + std::to_string(s.flags.count[i]);
    if (line.size() + item.size() > 100) {
      std::printf("%s\n", line.c_str());
      line = " ";
    }
    line += item;
  }
  std::printf("%s\n", line.c_str());
  std::printf("The same digest and counts from another device or build mean the same code for every\n"
              "float32 input; any difference means some input converts differently (find it: verify).\n");
  return 0;
}

int run_sweep(const SweepArgs& args) {
  const Format to = parse_format_option(args.to);
  const Policy policy = policy_from_text(args.policy);
  const Device device = parse_device_option(args.device);
  if (args.digest == !args.out.empty()) throw UsageError("sweep writes --out FILE or prints a --digest: give one");
  if (args.digest) return print_digest(args, to, policy, device);
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
                     "container), no header");
      sub.add_flag("--digest", args->digest,
                   "print an order-free digest of every (input, code) pair and the flag counts instead");
      add_policy_options(sub, args->policy, false);
      sub.add_option("--seed", args->seed, "stochastic rounding: input i draws RandomStream{seed}.draw(i), half of splitmix64(seed, i / 2)");
      add_device_option(sub, args->device);
      sub.footer("Defaults: rne, nosat, keep, ieee. 2^32 results: 4 GiB for an 8-bit format; --digest sums them\n"
                 "up in 16 hex digits and the flag counts (the same on CPU and GPU).");
      return std::function<int()>([=] { return run_sweep(*args); });
    }});

}  // namespace
}  // namespace fmtcheck::cli
