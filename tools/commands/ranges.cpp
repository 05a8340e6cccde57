// fmtcheck ranges: the facts of each format, one row per format.
#include <cmath>
#include <cstdio>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/command.hpp"
#include "common/record_output.hpp"
#include "common/options.hpp"
#include "common/table.hpp"
#include "fmtcheck/core/decode.hpp"
#include "fmtcheck/core/facts.hpp"

namespace fmtcheck::cli {
namespace {

// The terminal table: a power of two as "2^-14" (exact and short), any other
// value to 5 significant digits.
std::string brief_number(double v) {
  int exp = 0;
  if (std::frexp(v, &exp) == 0.5) return "2^" + std::to_string(exp - 1);
  return fmt::format("{:.5g}", v);
}

std::string brief_count(std::uint64_t n) { return n < 1000000 ? std::to_string(n) : fmt::format("{:.3g}", double(n)); }

int run_ranges(const std::string& list, bool csv, bool json) {
  const std::vector<Format> formats =
      list.empty() ? std::vector<Format>(preset_formats().begin(), preset_formats().end()) : format_list_from_string(list);
  if (json) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const Format& f : formats) out.push_back(to_json(facts_record(f)));
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  if (csv) {
    Table table({"format", "bits", "exponent_bits", "mantissa_bits", "bias", "specials", "max_finite", "min_normal",
                 "min_subnormal", "epsilon", "ulp_one", "unit_roundoff", "digits10", "max_digits10", "finite_codes",
                 "finite_values", "inf", "nan_codes", "nan_encodings"});
    for (const Format& f : formats) {
      const FormatFacts r = facts(f);
      table.add_row({f.name, std::to_string(f.width()), std::to_string(f.exponent_bits), std::to_string(f.mantissa_bits),
                     std::to_string(f.bias), specials_name(f), shortest(r.max_finite), shortest(r.min_normal),
                     r.min_subnormal ? shortest(*r.min_subnormal) : "none", shortest(r.epsilon), shortest(r.ulp_one),
                     shortest(r.unit_roundoff), std::to_string(r.digits10), std::to_string(r.max_digits10),
                     std::to_string(r.finite_codes), std::to_string(r.finite_values),
                     r.pos_inf_bits ? to_hex(f, *r.pos_inf_bits) : "none", std::to_string(r.nan_codes), r.nan_encodings});
    }
    std::fputs(table.csv().c_str(), stdout);
    return 0;
  }
  // People read the essentials within 100 columns; CSV and JSON carry every
  // column with every digit.
  Table brief({"format", "bits", "E", "M", "bias", "max finite", "min normal", "min subn.", "epsilon", "finite",
               "inf", "NaN codes"});
  for (const Format& f : formats) {
    const FormatFacts r = facts(f);
    brief.add_row({f.name, std::to_string(f.width()), std::to_string(f.exponent_bits), std::to_string(f.mantissa_bits),
                   std::to_string(f.bias), brief_number(r.max_finite), brief_number(r.min_normal),
                   r.min_subnormal ? brief_number(*r.min_subnormal) : "none", brief_number(r.epsilon),
                   brief_count(r.finite_values), r.pos_inf_bits ? "yes" : "no",
                   brief_count(r.nan_codes)});
  }
  std::fputs(brief.aligned().c_str(), stdout);
  std::puts("(finite: distinct finite values; numbers to 5 digits, counts to 3 past a million; --csv/--json\n"
            " give every digit and column: digits10, ulp(1), unit roundoff, NaN encodings...)");
  return 0;
}

const bool registered = register_command({
    "ranges", "facts of each format: range, precision, special values", 10, [](CLI::App& sub) {
      auto list = std::make_shared<std::string>();
      auto csv = std::make_shared<bool>(false);
      auto json = std::make_shared<bool>(false);
      sub.add_option("--formats", *list, "comma-separated formats, p3109 for that whole family (default: every preset)");
      auto* c = sub.add_flag("--csv", *csv, "CSV with every column");
      auto* j = sub.add_flag("--json", *json, "JSON with every field");
      c->excludes(j);
      return std::function<int()>([=] { return run_ranges(*list, *csv, *json); });
    }});

}  // namespace
}  // namespace fmtcheck::cli
