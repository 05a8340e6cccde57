// fmtcheck convert: one value at a time, with its exact error and flags.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "common/command.hpp"
#include "common/options.hpp"
#include "common/table.hpp"
#include "fmtcheck/core/convert.hpp"
#include "fmtcheck/core/decode.hpp"
#include "fmtcheck/core/exact_value.hpp"

namespace fmtcheck::cli {
namespace {

struct ConvertArgs {
  std::vector<std::string> values;
  std::string to;
  std::string from;
  PolicyOptions policy;
  bool json = false;
};

struct Row {
  std::string input;
  std::string input_value;  // exact decimal of the input
  Conversion result;
  std::string value;  // exact decimal of the result
  std::optional<double> abs_error, rel_error, ulp_error;
};

// A bit pattern of --from FORMAT: hex (0x3c00) or decimal, within the container.
std::uint64_t parse_bits(const std::string& text, const Format& from) {
  std::size_t used = 0;
  std::uint64_t bits = 0;
  try {
    bits = std::stoull(text, &used, 0);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty() || text[0] == '-') {
    throw UsageError("malformed bit pattern '" + text + "' for --from " + from.name + ": expected hex such as 0x3c00");
  }
  if ((bits & ~from.storage_mask()) != 0 || (bits & ((std::uint64_t{1} << from.pad_bits) - 1)) != 0) {
    throw UsageError("bit pattern '" + text + "' does not fit " + from.name);
  }
  return bits;
}

// The spacing of the result's binade: the unit of "ulps".
ExactValue ulp_of(const Format& f, std::uint64_t bits) {
  const Unpacked r = unpack(f, bits);
  Unpacked ulp;
  ulp.kind = Unpacked::Kind::finite;
  ulp.significand = std::uint64_t{1} << 63;
  const int binade = r.kind == Unpacked::Kind::finite ? std::max(r.exponent, f.min_exponent()) : f.min_exponent();
  ulp.exponent = binade - f.mantissa_bits;
  return ExactValue::from_unpacked(ulp);
}

Row convert_one(const std::string& text, const ConvertArgs& args, const Format& to, const Policy& policy) {
  Row row;
  row.input = text;
  std::optional<ExactValue> input;
  if (!args.from.empty()) {
    const Format from = parse_format_option(args.from);
    const std::uint64_t bits = parse_bits(text, from);
    input = ExactValue::from_bits(from, bits);
    row.input_value = to_exact_decimal(from, bits);
    row.result = convert_bits(bits, from, to, policy);
  } else {
    std::string error;
    input = ExactValue::parse(text, &error);
    if (!input) throw UsageError(error);
    row.input_value = input->kind() == ExactValue::Kind::finite ? to_exact_decimal(input->to_unpacked()) : text;
    if (input->to_unpacked().sticky) row.input_value = text;  // not a binary fraction: the text is exact
    row.result = round_to_format(input->to_unpacked(), to, policy);
  }
  row.value = to_exact_decimal(to, row.result.bits);
  const ExactValue result = ExactValue::from_bits(to, row.result.bits);
  if (input->kind() == ExactValue::Kind::finite && result.kind() == ExactValue::Kind::finite) {
    const ExactValue err = ExactValue::abs_difference(result, *input);
    row.abs_error = err.to_double();
    if (auto rel = ExactValue::relative_difference(result, *input)) row.rel_error = std::abs(rel->to_double());
    row.ulp_error = ExactValue::quotient(err, ulp_of(to, row.result.bits)).to_double();
  }
  return row;
}

std::string number_or_na(const std::optional<double>& v) { return v ? shortest(*v) : "n/a"; }

int run_convert(const ConvertArgs& args) {
  const std::vector<Format> targets = format_list_from_string(args.to);
  const Policy policy = policy_from_text(args.policy);
  // Every value into every target before anything is printed: a bad value
  // gives its one line and no partial output.
  std::vector<std::vector<Row>> rows(targets.size());
  for (std::size_t t = 0; t < targets.size(); ++t) {
    for (const std::string& text : args.values) rows[t].push_back(convert_one(text, args, targets[t], policy));
  }

  if (args.json) {
    const auto opt = [](const std::optional<double>& v) {
      return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json();
    };
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (std::size_t t = 0; t < targets.size(); ++t) {
      const Format& to = targets[t];
      for (const Row& r : rows[t]) {
        nlohmann::ordered_json j;
        j["input"] = r.input;
        j["input_value"] = r.input_value;
        j["format"] = to.name;
        j["policy"] = describe(policy);
        j["bits"] = to_hex(to, r.result.bits);
        j["value"] = r.value;
        j["abs_error"] = opt(r.abs_error);
        j["rel_error"] = opt(r.rel_error);
        j["ulp_error"] = opt(r.ulp_error);
        nlohmann::ordered_json flags = nlohmann::ordered_json::array();
        for (int i = 0; i < flag_count; ++i) {
          if (r.result.flags.has(static_cast<Flag>(i))) flags.push_back(std::string(to_string(static_cast<Flag>(i))));
        }
        j["flags"] = flags;
        out.push_back(j);
      }
    }
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  for (std::size_t t = 0; t < targets.size(); ++t) {
    const Format& to = targets[t];
    Table table({"input", "bits", "value", "abs error", "rel error", "ulps", "flags"});
    for (const Row& r : rows[t]) {
      table.add_row({r.input_value, to_hex(to, r.result.bits), r.value, number_or_na(r.abs_error),
                     number_or_na(r.rel_error), number_or_na(r.ulp_error), describe(r.result.flags)});
    }
    std::printf("%sto %s (%s)\n%s", t == 0 ? "" : "\n", to.name.c_str(), describe(policy).c_str(),
                table.aligned().c_str());
  }
  return 0;
}

const bool registered = register_command({
    "convert", "convert values exactly and show bits, error and flags", 30, [](CLI::App& sub) {
      auto args = std::make_shared<ConvertArgs>();
      sub.add_option("VALUE", args->values, "decimal, hex float (0x1.8p-3), fraction (1/3), inf, nan; or bits with --from. "
                     "Write -inf and -nan after --: fmtcheck convert --to e4m3 -- -inf")
          ->required();
      sub.add_option("--to", args->to, "target format, or several separated by commas (fp16,bf16,e4m3; p3109: its 30 "
                     "members), one table each")
          ->required();
      sub.add_option("--from", args->from, "read each VALUE as a bit pattern of this format");
      add_policy_options(sub, args->policy, true);
      sub.add_flag("--json", args->json, "JSON output");
      return std::function<int()>([=] { return run_convert(*args); });
    }});

}  // namespace
}  // namespace fmtcheck::cli
