// fmtcheck gemm-error: how far an emulated GEMM lands from the exact one as K
// grows, per model and promotion interval. The exact GEMM is computed with
// Boost.Multiprecision integers, independently of the models: this is the
// curve behind DeepSeek-V3's "about 14 bits" for FP8 on Hopper.
#include <boost/multiprecision/cpp_int.hpp>
#include <cmath>
#include <fmt/format.h>
#include <random>
#include <sstream>

#include "common/command.hpp"
#include "common/options.hpp"
#include "common/output_file.hpp"
#include "fmtcheck/core/convert.hpp"
#include "fmtcheck/core/decode.hpp"
#include "fmtcheck/tensor_core/gemm.hpp"

namespace fmtcheck::cli {
namespace {

using boost::multiprecision::cpp_int;

struct Options {
  std::string models = "hopper-wgmma", type = "e4m3", type_b, ks = "64,256,1024,4096", dist = "normal", promote = "0";
  std::string csv = "-", accumulator = "fp32";
  std::size_t m = 16, n = 16;
  unsigned seed = 1;
};

std::vector<std::size_t> parse_sizes(const std::string& text, const char* option, bool allow_zero) {
  std::vector<std::size_t> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    std::size_t used = 0;
    unsigned long long v = 0;
    try {
      v = std::stoull(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || (v == 0 && !allow_zero)) {
      throw UsageError(fmt::format("bad {} '{}': expected a comma-separated list of {} integers", option, text,
                                   allow_zero ? "non-negative" : "positive"));
    }
    out.push_back(v);
  }
  if (out.empty()) throw UsageError(fmt::format("empty {}", option));
  return out;
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// Random matrix entries rounded to `input` (nearest even, saturating).
std::vector<std::uint32_t> random_matrix(const Format& input, const std::string& dist, std::size_t count,
                                         std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::lognormal_distribution<double> lognormal;
  Policy p;
  p.overflow = Overflow::sat;
  std::vector<std::uint32_t> out(count);
  for (auto& v : out) {
    const double x = dist == "normal" ? normal(rng) : dist == "uniform" ? uniform(rng) : lognormal(rng);
    v = static_cast<std::uint32_t>(convert(x, input, p).bits);
  }
  return out;
}

// value * 2^shift as an integer; exact for every value the caller passes.
cpp_int scaled_integer(double value, int shift) {
  int e = 0;
  const double frac = std::frexp(value, &e);  // value = frac * 2^e, |frac| in [0.5, 1)
  const auto sig = static_cast<std::int64_t>(std::ldexp(frac, 53));
  const int total = e - 53 + shift;
  cpp_int r = sig;
  if (total >= 0) return r << total;
  return r >> -total;  // callers guarantee no bits are lost
}

// Errors over the elements: relative to |exact|, and relative to sum |a*b|
// (which cancellation cannot make small: it shows the bits the accumulation
// keeps). Exact in scaled integers, then rounded to double.
struct ErrorStats {
  double max = 0, sum = 0, max_abs = 0, sum_abs = 0;
  std::size_t count = 0;
  void add(double rel, double rel_abs) {
    max = std::max(max, rel);
    sum += rel;
    max_abs = std::max(max_abs, rel_abs);
    sum_abs += rel_abs;
    ++count;
  }
};

int run(const Options& o) {
  const Format input = parse_format_option(o.type);
  const Format input_b = o.type_b.empty() ? input : parse_format_option(o.type_b);
  if (o.dist != "normal" && o.dist != "uniform" && o.dist != "lognormal") {
    throw UsageError("bad --dist '" + o.dist + "': expected normal, uniform or lognormal");
  }
  const std::vector<std::size_t> ks = parse_sizes(o.ks, "--k", false);
  const std::vector<std::size_t> promotes = parse_sizes(o.promote, "--promote", true);
  if (o.accumulator != "fp32" && o.accumulator != "fp16") {
    throw UsageError("bad --accumulator '" + o.accumulator + "': expected fp32 or fp16");
  }
  const Format accumulator = o.accumulator == "fp32" ? formats::fp32 : formats::fp16;
  const std::string types = input.name + (input_b == input ? "" : "x" + input_b.name);
  std::vector<std::pair<std::string, DotModel>> models;
  for (const std::string& name : split(o.models)) {
    const TensorCoreModel* m = find_tensor_core_model(name);
    if (!m) throw UsageError("unknown --model '" + name + "' (see fmtcheck mma --help)");
    const std::optional<DotModel> dot = m->for_inputs(input, input_b);
    if (!dot) throw UsageError("model '" + name + "' has no published arithmetic for " + types + " inputs");
    if (accumulator != formats::fp32 && !dot->writes_fp16) {
      throw UsageError("model '" + name + "' accumulates in fp32 only");
    }
    models.emplace_back(name, *dot);
  }
  if (models.empty()) throw UsageError("empty --model list");
  if (o.m == 0 || o.n == 0) throw UsageError("--m and --n must be positive");

  // Products of A and B are integers once scaled by 2^(lsb_a + lsb_b);
  // fp32 results once scaled by 2^149. One common scale covers both.
  const int lsb_a = input.mantissa_bits - input.min_exponent();  // 2^-lsb_a: A's smallest step
  const int lsb_b = input_b.mantissa_bits - input_b.min_exponent();
  const int scale = std::max(lsb_a + lsb_b, 149);

  OutputFile out(o.csv);
  out.write("model,type,dist,promote,k,m,n,max_rel_error,mean_rel_error,bits_max,bits_mean,max_error_vs_abs_sum,bits_vs_abs_sum,accumulator\n");
  for (const std::size_t k : ks) {
    std::mt19937_64 rng(o.seed + k);
    const auto a = random_matrix(input, o.dist, o.m * k, rng);
    const auto b = random_matrix(input_b, o.dist, k * o.n, rng);
    // The exact GEMM (C = 0), independent of every model.
    std::vector<cpp_int> exact(o.m * o.n), abs_sum(o.m * o.n);
    std::vector<cpp_int> ai(a.size()), bi(b.size());
    for (std::size_t i = 0; i < a.size(); ++i) ai[i] = scaled_integer(to_double(input, a[i]), lsb_a);
    for (std::size_t i = 0; i < b.size(); ++i) bi[i] = scaled_integer(to_double(input_b, b[i]), lsb_b);
    for (std::size_t i = 0; i < o.m; ++i) {
      for (std::size_t j = 0; j < o.n; ++j) {
        cpp_int s = 0, s_abs = 0;
        for (std::size_t q = 0; q < k; ++q) {
          const cpp_int p = ai[i * k + q] * bi[q * o.n + j];
          s += p;
          s_abs += boost::multiprecision::abs(p);
        }
        exact[i * o.n + j] = s << (scale - lsb_a - lsb_b);
        abs_sum[i * o.n + j] = s_abs << (scale - lsb_a - lsb_b);
      }
    }
    const std::vector<float> c(o.m * o.n, 0.0f);
    std::vector<float> d(o.m * o.n);
    for (const auto& [name, dot] : models) {
      for (const std::size_t promote : promotes) {
        GemmConfig g;
        g.model = dot;
        g.input = input;
        g.input_b = input_b;
        g.accumulator = accumulator;
        g.promote_every = promote;
        gemm(g, o.m, o.n, k, a, b, c, d);
        ErrorStats st;
        for (std::size_t i = 0; i < d.size(); ++i) {
          if (exact[i] == 0 || !std::isfinite(d[i])) continue;
          const cpp_int diff = boost::multiprecision::abs(scaled_integer(d[i], scale) - exact[i]);
          const double err = diff.convert_to<double>();
          st.add(err / boost::multiprecision::abs(exact[i]).convert_to<double>(), err / abs_sum[i].convert_to<double>());
        }
        const double mean = st.count ? st.sum / static_cast<double>(st.count) : 0.0;
        const auto bits = [](double e) { return e > 0 ? -std::log2(e) : INFINITY; };
        out.write(fmt::format("{},{},{},{},{},{},{},{:.6g},{:.6g},{:.3f},{:.3f},{:.6g},{:.3f},{}\n", name, types,
                              o.dist, promote, k, o.m, o.n, st.max, mean, bits(st.max), bits(mean), st.max_abs,
                              bits(st.max_abs), accumulator.name));
      }
    }
  }
  out.commit();
  return 0;
}

const bool registered = register_command({
    "gemm-error",
    "relative error of emulated GEMMs against the exact GEMM as K grows, per model and promotion interval",
    61,
    [](CLI::App& sub) -> std::function<int()> {
      auto o = std::make_shared<Options>();
      sub.add_option("--model", o->models, "tensor-core models, comma-separated (see fmtcheck mma --help)")
          ->capture_default_str();
      sub.add_option("--type", o->type, "input type of A (and B): fp16, bf16, tf32, e4m3, e5m2, e4m3fnuz, e5m2fnuz")
          ->capture_default_str();
      sub.add_option("--type-b", o->type_b, "input type of B when it differs (e4m3 x e5m2; the CSV's type reads e4m3xe5m2)");
      sub.add_option("--k", o->ks, "K values, comma-separated")->capture_default_str();
      sub.add_option("--dist", o->dist, "entries: normal (0,1), uniform (-1,1) or lognormal (0,1, all positive)")
          ->capture_default_str();
      sub.add_option("--promote", o->promote,
                     "promotion intervals in K elements, comma-separated; 0 = never (FAST_ACCUM)")
          ->capture_default_str();
      sub.add_option("--accumulator", o->accumulator,
                     "the instruction's accumulator: fp32, or fp16 (each block's D rounded to fp16 and fed back as C)")
          ->capture_default_str();
      sub.add_option("--m", o->m, "rows of A (dot products per K: m*n)")->capture_default_str();
      sub.add_option("--n", o->n, "columns of B")->capture_default_str();
      sub.add_option("--seed", o->seed, "random seed")->capture_default_str();
      sub.add_option("--csv", o->csv, "output CSV file ('-': standard output)")->capture_default_str();
      return [o]() { return run(*o); };
    },
});

}  // namespace
}  // namespace fmtcheck::cli
