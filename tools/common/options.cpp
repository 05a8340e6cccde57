#include "common/options.hpp"

#include "common/command.hpp"

#if defined(FMTCHECK_HAS_CUDA)
#include "fmtcheck/cuda/device.hpp"
#endif

namespace fmtcheck::cli {

void add_policy_options(CLI::App& sub, PolicyOptions& o, bool single_value) {
  sub.add_option("--round", o.round, "rounding: rne, rna, rtz, rup, rdn, rto (to odd), sr (stochastic), sr-rne, sr-rna, sr-rno (stochastic after rounding the fraction to --sr-bits, ties to even, away or to odd)")
      ->capture_default_str();
  sub.add_option("--overflow", o.overflow, "sat (to +-max, infinities too; P3109 SatFinite), nosat (IEEE; OvfInf) or satprop (finite values to +-max, infinities kept; SatPropagate)")->capture_default_str();
  sub.add_option("--subnormals", o.subnormals, "keep, ftz (flush results), daz (flush inputs), ftz+daz")
      ->capture_default_str();
  sub.add_option("--tininess", o.tininess, "underflow detected after or before rounding")->capture_default_str();
  sub.add_option("--nan", o.nan, "NaN convention: ieee (F16C), x86 (SSE/AVX/F16C), arm, arm-dn (= canonical), riscv (= canonical), cuda (NVIDIA host), numpy, ml_dtypes, torch (PyTorch CPU casts), canonical")->capture_default_str();
  sub.add_option("--sr-bits", o.sr_bits, "random bits used by stochastic rounding (1..32)");
  if (single_value) {
    sub.add_option("--sr-random", o.sr_random,
                   "the random draw for --round sr, sr-rne, sr-rna and sr-rno; without it, every outcome with its "
                   "probability and the mean over the draws");
  }
}

Format parse_format_option(const std::string& text) {
  std::string error;
  auto f = parse_format(text, &error);
  if (!f) throw UsageError(error);
  return *f;
}

void add_device_option(CLI::App& sub, std::string& device) {
  sub.add_option("--device", device, "cpu (every core) or cuda (fmtcheck's own rounding on the GPU, the same bits)")
      ->capture_default_str();
}

Device parse_device_option(const std::string& text) {
  if (text == "cpu") return Device::cpu;
  if (text != "cuda") throw UsageError("bad --device '" + text + "': expected cpu or cuda");
#if defined(FMTCHECK_HAS_CUDA)
  std::string why;
  if (!cuda::find_device(&why)) throw UsageError("--device cuda: no GPU found: " + why);
  return Device::cuda;
#else
  throw UsageError("--device cuda: this fmtcheck was built without CUDA (no nvcc at build time)");
#endif
}

}  // namespace fmtcheck::cli
