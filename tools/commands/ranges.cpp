// fmtcheck ranges: the facts of each format, one row per format.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "common/command.hpp"
#include "common/record_output.hpp"
#include "common/options.hpp"
#include "common/table.hpp"
#include "fmtcheck/core/decode.hpp"
#include "fmtcheck/core/facts.hpp"

namespace fmtcheck::cli {
namespace {

// Powers of two read better than 17 digits: "6.103515625e-05 (2^-14)".
std::string with_power(double v) {
  int exp = 0;
  const double mant = std::frexp(v, &exp);
  if (mant == 0.5) return shortest(v) + " (2^" + std::to_string(exp - 1) + ")";
  return shortest(v);
}

int run_ranges(const std::string& list, bool csv, bool json) {
  const std::vector<Format> formats =
      list.empty() ? std::vector<Format>(preset_formats().begin(), preset_formats().end()) : format_list_from_string(list);
  if (json) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const Format& f : formats) out.push_back(to_json(facts_record(f)));
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  Table table({"format", "bits", "exponent_bits", "mantissa_bits", "bias", "specials", "max_finite", "min_normal",
               "min_subnormal", "epsilon", "ulp_one", "unit_roundoff", "digits10", "max_digits10", "finite_codes",
               "finite_values", "inf", "nan_codes", "nan_encodings"});
  for (const Format& f : formats) {
    const FormatFacts r = facts(f);
    auto number = [&](double v) { return csv ? shortest(v) : with_power(v); };
    table.add_row({f.name, std::to_string(f.width()), std::to_string(f.exponent_bits), std::to_string(f.mantissa_bits),
                   std::to_string(f.bias), specials_name(f), number(r.max_finite), number(r.min_normal),
                   r.min_subnormal ? number(*r.min_subnormal) : "none", number(r.epsilon), number(r.ulp_one),
                   number(r.unit_roundoff), std::to_string(r.digits10), std::to_string(r.max_digits10),
                   std::to_string(r.finite_codes), std::to_string(r.finite_values),
                   r.pos_inf_bits ? to_hex(f, *r.pos_inf_bits) : "none", std::to_string(r.nan_codes), r.nan_encodings});
  }
  if (csv) {
    std::fputs(table.csv().c_str(), stdout);
    return 0;
  }
  // People read the essentials; CSV and JSON carry every column.
  Table brief({"format", "bits", "E", "M", "bias", "max finite", "min normal", "min subnormal", "epsilon", "digits10",
               "finite values", "inf", "NaN"});
  for (const auto& row : table.rows()) {
    brief.add_row({row[0], row[1], row[2], row[3], row[4], row[6], row[7], row[8], row[9], row[12], row[15], row[16],
                   row[18]});
  }
  std::fputs(brief.aligned().c_str(), stdout);
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
