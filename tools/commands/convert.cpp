// fmtcheck convert: one value at a time, with its exact error and flags, a
// table per format and rounding mode; under stochastic rounding without a
// draw, every outcome with its probability and the mean over the draws.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/command.hpp"
#include "common/options.hpp"
#include "common/table.hpp"
#include "fmtcheck/core/convert.hpp"
#include "fmtcheck/core/decode.hpp"
#include "fmtcheck/core/exact_value.hpp"
#include "fmtcheck/core/stochastic_outcomes.hpp"

namespace fmtcheck::cli {
namespace {

struct ConvertArgs {
  std::vector<std::string> values;
  std::string to;
  std::string from;
  PolicyOptions policy;
  bool draw_given = false;  // --sr-random; without it stochastic rounding shows every outcome
  bool json = false;
};

// One result of one value: the only one, or one outcome of stochastic rounding.
struct Outcome {
  Conversion result;
  std::string value;  // exact decimal of the result
  std::optional<double> abs_error, rel_error, ulp_error;
  std::uint64_t draws = 0;  // with the distribution: how many draws give it
};

struct Converted {
  std::string input;
  std::string input_value;  // exact decimal of the input
  std::vector<Outcome> outcomes;
  // With the distribution, where every outcome is finite: the mean result
  // over all draws and its difference from the input.
  std::optional<StochasticMean> mean;
};

// One table: a format, a policy, and each value converted.
struct ConvertTable {
  Format to;
  Policy policy;
  bool distribution;  // stochastic rounding without a draw: every outcome
  std::vector<Converted> rows;
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

Outcome measure(const Conversion& result, const ExactValue& input, const Format& to) {
  Outcome o;
  o.result = result;
  o.value = to_exact_decimal(to, result.bits);
  const ExactValue value = ExactValue::from_bits(to, result.bits);
  if (input.kind() == ExactValue::Kind::finite && value.kind() == ExactValue::Kind::finite) {
    const ExactValue err = ExactValue::abs_difference(value, input);
    o.abs_error = err.to_double();
    if (auto rel = ExactValue::relative_difference(value, input)) o.rel_error = std::abs(rel->to_double());
    o.ulp_error = ExactValue::quotient(err, ulp_of(to, result.bits)).to_double();
  }
  return o;
}

Converted convert_one(const std::string& text, const ConvertArgs& args, const Format& to, const Policy& policy,
                      bool distribution) {
  Converted c;
  c.input = text;
  std::optional<ExactValue> input;
  Unpacked x;
  if (!args.from.empty()) {
    const Format from = parse_format_option(args.from);
    const std::uint64_t bits = parse_bits(text, from);
    input = ExactValue::from_bits(from, bits);
    c.input_value = to_exact_decimal(from, bits);
    x = unpack(from, bits);
  } else {
    std::string error;
    input = ExactValue::parse(text, &error);
    if (!input) throw UsageError(error);
    x = input->to_unpacked();
    c.input_value = input->kind() == ExactValue::Kind::finite ? to_exact_decimal(x) : text;
    if (x.sticky) c.input_value = text;  // not a binary fraction: the text is exact
  }
  if (!distribution) {
    c.outcomes.push_back(measure(round_to_format(x, to, policy), *input, to));
    return c;
  }
  const std::vector<StochasticOutcome> outcomes = stochastic_outcomes(x, to, policy);
  for (const StochasticOutcome& s : outcomes) {
    c.outcomes.push_back(measure(s.result, *input, to));
    c.outcomes.back().draws = s.draws;
  }
  c.mean = stochastic_mean(outcomes, to, *input);
  return c;
}

std::string number_or_na(const std::optional<double>& v) { return v ? shortest(*v) : "n/a"; }

// One policy per --round entry (--round rne,rtz,sr: a table for each). In
// a list, the deterministic modes leave --sr-bits and --sr-random to the
// stochastic ones; alone, they refuse them as the other commands do.
std::vector<Policy> policies_of(const PolicyOptions& options) {
  std::vector<std::string> rounds;
  for (std::size_t start = 0; start <= options.round.size();) {
    const std::size_t comma = std::min(options.round.find(',', start), options.round.size());
    if (comma > start) rounds.push_back(options.round.substr(start, comma - start));
    start = comma + 1;
  }
  if (rounds.empty()) throw UsageError("bad --round '" + options.round + "': no rounding mode");
  std::vector<Policy> out;
  for (const std::string& round : rounds) {
    PolicyOptions one = options;
    one.round = round;
    const auto mode = parse_rounding(round);
    if (rounds.size() > 1 && mode && !is_stochastic(*mode)) {
      one.sr_bits = 0;
      one.sr_random = 0;
    }
    out.push_back(policy_from_text(one));
  }
  return out;
}

int run_convert(const ConvertArgs& args) {
  // Every value in every table before anything is printed: a bad value
  // gives its one line and no partial output.
  std::vector<ConvertTable> tables;
  for (const Format& to : format_list_from_string(args.to)) {
    for (const Policy& policy : policies_of(args.policy)) {
      const bool distribution = is_stochastic(policy.rounding) && !args.draw_given;
      ConvertTable& table = tables.emplace_back(ConvertTable{to, policy, distribution, {}});
      for (const std::string& text : args.values) {
        table.rows.push_back(convert_one(text, args, to, policy, table.distribution));
      }
    }
  }

  // Probabilities are draws / 2^k, exact in a double for k <= 32.
  const auto probability = [](const ConvertTable& t, const Outcome& o) {
    return std::ldexp(static_cast<double>(o.draws), -t.policy.random_bit_count);
  };
  if (args.json) {
    const auto opt = [](const std::optional<double>& v) {
      return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json();
    };
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const ConvertTable& t : tables) {
      for (const Converted& c : t.rows) {
        for (const Outcome& o : c.outcomes) {
          nlohmann::ordered_json j;
          j["input"] = c.input;
          j["input_value"] = c.input_value;
          j["format"] = t.to.name;
          j["policy"] = describe(t.policy);
          j["bits"] = to_hex(t.to, o.result.bits);
          j["value"] = o.value;
          j["abs_error"] = opt(o.abs_error);
          j["rel_error"] = opt(o.rel_error);
          j["ulp_error"] = opt(o.ulp_error);
          nlohmann::ordered_json flags = nlohmann::ordered_json::array();
          for (int i = 0; i < flag_count; ++i) {
            if (o.result.flags.has(static_cast<Flag>(i))) flags.push_back(std::string(to_string(static_cast<Flag>(i))));
          }
          j["flags"] = flags;
          if (t.distribution) {
            j["draws"] = o.draws;
            j["probability"] = probability(t, o);
            j["expected_value"] = c.mean ? nlohmann::ordered_json(c.mean->mean) : nlohmann::ordered_json();
            j["bias"] = c.mean ? nlohmann::ordered_json(c.mean->bias) : nlohmann::ordered_json();
          }
          out.push_back(j);
        }
      }
    }
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  for (const ConvertTable& t : tables) {
    std::vector<std::string> header = {"input", "bits", "value", "abs error", "rel error", "ulps", "flags"};
    if (t.distribution) header.insert(header.begin() + 3, "probability");
    Table table(header);
    std::string means;
    for (const Converted& c : t.rows) {
      for (std::size_t k = 0; k < c.outcomes.size(); ++k) {
        const Outcome& o = c.outcomes[k];
        std::vector<std::string> row = {k == 0 ? c.input_value : "", to_hex(t.to, o.result.bits), o.value,
                                        number_or_na(o.abs_error), number_or_na(o.rel_error),
                                        number_or_na(o.ulp_error), describe(o.result.flags)};
        if (t.distribution) row.insert(row.begin() + 3, shortest(probability(t, o)));
        table.add_row(row);
      }
      if (t.distribution) {
        const std::string mean =
            c.mean ? shortest(c.mean->mean) + ", bias " + shortest(c.mean->bias) : "n/a (an outcome is not finite)";
        means += c.input_value + ": mean over the draws " + mean + "\n";
      }
    }
    const std::string title =
        fmt::format("to {} ({}){}", t.to.name, describe(t.policy),
                    t.distribution ? fmt::format(": every outcome of the 2^{} draws", t.policy.random_bit_count) : "");
    std::printf("%s%s\n%s%s", &t == &tables.front() ? "" : "\n", title.c_str(), table.aligned().c_str(),
                means.c_str());
  }
  return 0;
}

const bool registered = register_command({
    "convert", "convert values exactly and show bits, error and flags", 30, [](CLI::App& sub) {
      auto args = std::make_shared<ConvertArgs>();
      sub.add_option("VALUE", args->values,
                     "decimal, hex float (0x1.8p-3), fraction (1/3), inf, nan; or bits with --from. "
                     "Write -inf and -nan after --: fmtcheck convert --to e4m3 -- -inf")
          ->required();
      sub.add_option("--to", args->to, "target format, or several separated by commas (fp16,bf16,e4m3; p3109: its 30 "
                     "members), one table each")
          ->required();
      sub.add_option("--from", args->from, "read each VALUE as a bit pattern of this format");
      add_policy_options(sub, args->policy, true);
      CLI::Option* round = sub.get_option("--round");
      round->description(round->get_description() + "; several separated by commas (rne,rtz,sr), a table each");
      sub.add_flag("--json", args->json, "JSON output; with the distribution, draws, probability, expected_value "
                   "and bias per outcome");
      const CLI::Option* sr_random = sub.get_option("--sr-random");
      return std::function<int()>([=] {
        args->draw_given = sr_random->count() != 0;
        return run_convert(*args);
      });
    }});

}  // namespace
}  // namespace fmtcheck::cli
