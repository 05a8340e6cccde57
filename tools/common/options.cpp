#include "common/options.hpp"

#include <sstream>

#include "common/command.hpp"

namespace fmtcheck::cli {

void add_policy_options(CLI::App& sub, PolicyOptions& o, bool single_value) {
  sub.add_option("--round", o.round, "rounding: rne, rna, rtz, rup, rdn, rto (to odd), sr (stochastic)")
      ->capture_default_str();
  sub.add_option("--overflow", o.overflow, "sat (to +-max, infinities too) or nosat (IEEE)")->capture_default_str();
  sub.add_option("--subnormals", o.subnormals, "keep, ftz (flush results), daz (flush inputs), ftz+daz")
      ->capture_default_str();
  sub.add_option("--tininess", o.tininess, "underflow detected after or before rounding")->capture_default_str();
  sub.add_option("--nan", o.nan, "NaN convention: ieee (F16C), cuda (NVIDIA host), canonical")->capture_default_str();
  sub.add_option("--sr-bits", o.sr_bits, "random bits used by stochastic rounding (1..32)");
  if (single_value) sub.add_option("--sr-random", o.sr_random, "the random draw for --round sr");
}

Policy to_policy(const PolicyOptions& o) {
  Policy p;
  auto need = [](auto parsed, const std::string& option, const std::string& value, const char* allowed) {
    if (!parsed) throw UsageError("bad " + option + " '" + value + "': expected one of " + allowed);
    return *parsed;
  };
  p.rounding = need(parse_rounding(o.round), "--round", o.round, "rne, rna, rtz, rup, rdn, rto, sr");
  p.overflow = need(parse_overflow(o.overflow), "--overflow", o.overflow, "sat, nosat");
  p.subnormals = need(parse_subnormals(o.subnormals), "--subnormals", o.subnormals, "keep, ftz, daz, ftz+daz");
  p.tininess = need(parse_tininess(o.tininess), "--tininess", o.tininess, "after, before");
  p.nan = need(parse_nan_convention(o.nan), "--nan", o.nan, "ieee, cuda, canonical");
  if (p.rounding == Rounding::sr) {
    if (o.sr_bits < 1 || o.sr_bits > 32) throw UsageError("--round sr needs --sr-bits between 1 and 32");
    if (o.sr_bits < 32 && (o.sr_random >> o.sr_bits) != 0) {
      throw UsageError("--sr-random " + std::to_string(o.sr_random) + " does not fit in " + std::to_string(o.sr_bits) + " bits");
    }
    p.random_bit_count = o.sr_bits;
    p.random_bits = o.sr_random;
  } else if (o.sr_bits != 0) {
    throw UsageError("--sr-bits applies only to --round sr");
  }
  return p;
}

Format parse_format_option(const std::string& text) {
  std::string error;
  auto f = parse_format(text, &error);
  if (!f) throw UsageError(error);
  return *f;
}

std::vector<Format> parse_format_list(const std::string& text) {
  std::vector<Format> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    out.push_back(parse_format_option(item));
  }
  if (out.empty()) throw UsageError("empty format list '" + text + "'");
  return out;
}

}  // namespace fmtcheck::cli
