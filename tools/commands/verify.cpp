// fmtcheck verify: is someone's cast kernel exactly right? Compares their
// sweep file with fmtcheck's result for every float32 input.
#include <array>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "common/command.hpp"
#include "common/float32_sweep.hpp"
#include "common/options.hpp"
#include "common/progress.hpp"
#include "common/table.hpp"
#include "fmtcheck/core/convert.hpp"
#include "fmtcheck/core/decode.hpp"
#include "fmtcheck/core/facts.hpp"

namespace fmtcheck::cli {
namespace {

struct VerifyArgs {
  std::string to;
  std::string against;
  PolicyOptions policy;
  std::uint64_t seed = 0;
  std::size_t examples = 5;
  std::string device = "cpu";
};

enum class DiffClass { nan, overflow, subnormal, tie, other };
constexpr std::array<const char*, 5> kClassNames{"nan", "overflow", "subnormal", "tie", "other"};

struct Difference {
  std::uint32_t input;
  std::uint64_t expected;
  std::uint64_t got;
};

// Which kind of input a difference is about, first match wins: NaN inputs,
// inputs beyond max finite, special results from in-range inputs, inputs
// below min normal, exact ties, and the rest.
class Classifier {
 public:
  explicit Classifier(const Format& f) : f_(f) {
    const FormatFacts r = facts(f);
    max_finite_ = r.max_finite;
    min_normal_ = r.min_normal;
  }

  DiffClass classify_difference(const Difference& d) const {
    const float x = std::bit_cast<float>(d.input);
    const auto ce = fmtcheck::classify(f_, d.expected);
    const auto cg = fmtcheck::classify(f_, d.got);
    if (std::isnan(x)) return DiffClass::nan;
    if (std::isinf(x) || std::fabs(x) > max_finite_) return DiffClass::overflow;
    if (ce == ValueClass::nan || cg == ValueClass::nan || ce == ValueClass::inf || cg == ValueClass::inf) {
      return DiffClass::nan;
    }
    if (std::fabs(x) < min_normal_ || ce == ValueClass::subnormal || cg == ValueClass::subnormal) {
      return DiffClass::subnormal;
    }
    if (is_tie(x)) return DiffClass::tie;
    return DiffClass::other;
  }

 private:
  // x lies exactly halfway between its two neighbours in the format. The
  // neighbours have at most 24 significant bits, so their sum is exact in double.
  bool is_tie(float x) const {
    const float a = std::fabs(x);
    const Conversion down = convert(a, f_, Policy{.rounding = Rounding::rtz});
    if (!down.flags.has(Flag::inexact)) return false;
    const std::uint64_t up_bits = f_.to_storage(f_.from_storage(down.bits) + 1);
    return 2.0 * a == to_double(f_, down.bits) + to_double(f_, up_bits);
  }

  Format f_;
  double max_finite_ = 0;
  double min_normal_ = 0;
};

std::uint64_t read_element(const std::uint8_t* p, std::size_t width) {
  std::uint64_t v = 0;
  std::memcpy(&v, p, width);  // little-endian host, checked in float32_sweep.cpp
  return v;
}

int run_verify(const VerifyArgs& args) {
  const Format to = parse_format_option(args.to);
  const Policy policy = policy_from_text(args.policy);
  const Device device = parse_device_option(args.device);
  const std::size_t width = static_cast<std::size_t>(to.storage_bits) / 8;
  const std::uint64_t expected_size = kFloat32Count * width;
  const bool from_stdin = args.against == "-";
  const std::string size_rule = "a sweep to " + to.name + " has 2^32 elements of " + std::to_string(width) +
                                " bytes = " + std::to_string(expected_size) + " bytes";
  if (!from_stdin) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(args.against, ec);
    if (ec) throw UsageError("cannot read '" + args.against + "': " + ec.message());
    if (size != expected_size) {
      throw UsageError("'" + args.against + "' has " + std::to_string(size) + " bytes; " + size_rule);
    }
  }
  std::FILE* in = from_stdin ? stdin : std::fopen(args.against.c_str(), "rb");
  if (!in) throw UsageError("cannot open '" + args.against + "': " + std::strerror(errno));

  const Classifier classifier(to);
  std::array<std::uint64_t, 5> counts{};
  std::array<std::vector<Difference>, 5> examples;
  std::vector<std::uint8_t> theirs(kSweepChunk * width);
  Progress progress("verify " + to.name, kFloat32Count);
  sweep_float32(to, policy, args.seed, device, [&](std::uint64_t first, std::span<const std::uint8_t> ours) {
    if (std::fread(theirs.data(), 1, theirs.size(), in) != theirs.size()) {
      throw UsageError("'" + args.against + "' ended early at input " + std::to_string(first) + "; " + size_rule);
    }
    if (std::memcmp(theirs.data(), ours.data(), ours.size()) == 0) {
      progress.update(first + kSweepChunk);
      return;
    }
    for (std::uint64_t i = 0; i < kSweepChunk; ++i) {
      const std::uint64_t expected = read_element(ours.data() + i * width, width);
      const std::uint64_t got = read_element(theirs.data() + i * width, width);
      if (expected == got) continue;
      const Difference d{static_cast<std::uint32_t>(first + i), expected, got};
      const auto c = static_cast<std::size_t>(classifier.classify_difference(d));
      ++counts[c];
      if (examples[c].size() < args.examples) examples[c].push_back(d);
    }
    progress.update(first + kSweepChunk);
  });
  if (from_stdin && std::fgetc(in) != EOF) throw UsageError("standard input is longer than " + size_rule);
  if (!from_stdin) std::fclose(in);

  std::uint64_t total = 0;
  for (auto c : counts) total += c;
  std::printf("verify %s (%s) against %s\n", to.name.c_str(), describe(policy).c_str(), args.against.c_str());
  if (total == 0) {
    std::printf("all 4294967296 inputs agree\n");
    return 0;
  }
  std::printf("%llu of 4294967296 inputs differ\n", static_cast<unsigned long long>(total));
  Table summary({"class", "differ"});
  for (std::size_t c = 0; c < counts.size(); ++c) summary.add_row({kClassNames[c], std::to_string(counts[c])});
  std::fputs(summary.aligned().c_str(), stdout);
  Table table({"class", "input", "input value", "expected", "expected value", "got", "got value"});
  for (std::size_t c = 0; c < examples.size(); ++c) {
    for (const Difference& d : examples[c]) {
      table.add_row({kClassNames[c], to_hex(formats::fp32, d.input), to_exact_decimal(formats::fp32, d.input),
                     to_hex(to, d.expected), to_exact_decimal(to, d.expected), to_hex(to, d.got),
                     to_exact_decimal(to, d.got)});
    }
  }
  std::printf("\nexamples (expected = fmtcheck under the policy above):\n%s", table.aligned().c_str());
  return 1;
}

const bool registered = register_command({
    "verify", "compare another implementation's sweep file with fmtcheck, input by input", 50, [](CLI::App& sub) {
      auto args = std::make_shared<VerifyArgs>();
      sub.add_option("--to", args->to, "target format")->required();
      sub.add_option("--against", args->against, "their results in the layout `fmtcheck sweep` writes, or - for stdin")
          ->required();
      add_policy_options(sub, args->policy, false);
      sub.add_option("--seed", args->seed, "stochastic rounding: input i draws RandomStream{seed}.draw(i), half of splitmix64(seed, i / 2)");
      sub.add_option("--examples", args->examples, "examples listed per class")->capture_default_str();
      add_device_option(sub, args->device);
      return std::function<int()>([=] { return run_verify(*args); });
    }});

}  // namespace
}  // namespace fmtcheck::cli
