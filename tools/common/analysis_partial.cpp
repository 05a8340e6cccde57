#include "common/analysis_partial.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <tuple>

#include "common/usage_error.hpp"
#include "fmtcheck/analysis/tensor_analysis.hpp"

namespace fmtcheck::cli {
namespace {

using Json = nlohmann::ordered_json;
constexpr int partial_layout = 1;  // bumped when the file's layout changes

// Doubles travel as C99 hexadecimal floats: exact, and NaN and infinities survive.
std::string hex(double v) {
  char text[40];
  std::snprintf(text, sizeof text, "%a", v);
  return text;
}

double unhex(const Json& j) {
  const std::string text = j.get<std::string>();
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0') throw std::invalid_argument("'" + text + "' is not a number");
  return v;
}

Json stats_json(const ConversionStats& s) {
  return Json::array({s.values, s.exact, s.inexact, s.overflow, s.saturated, s.underflow_to_zero, s.subnormal, s.flushed,
                      s.nan_in, s.inf_in, s.nan_produced, s.nonfinite_out, s.error_count, s.rel_error_count,
                      hex(s.max_abs_error), hex(s.max_rel_error), hex(s.sum_rel_error), hex(s.sum_sq_rel_error)});
}

// Integers as the file must store them. nlohmann's get<> would take a
// float or a negative number for one without a word, and converting a
// float out of the type's range is undefined behaviour.
std::uint64_t count_from(const Json& j) {
  if (!j.is_number_unsigned()) throw std::invalid_argument(j.dump() + " is not a count");
  return j.get<std::uint64_t>();
}

int int_from(const Json& j) {
  const bool fits = j.is_number_unsigned() ? j.get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<int>::max())
                    : j.is_number_integer() ? j.get<std::int64_t>() >= std::numeric_limits<int>::min()
                                            : false;
  if (!fits) throw std::invalid_argument(j.dump() + " is not an int");
  return static_cast<int>(j.get<std::int64_t>());
}

ConversionStats stats_from(const Json& j) {
  if (!j.is_array() || j.size() != 18) throw std::invalid_argument("conversion counters are not a list of 18");
  ConversionStats s;
  std::uint64_t* counts[] = {&s.values,   &s.exact,  &s.inexact,      &s.overflow,      &s.saturated,   &s.underflow_to_zero, &s.subnormal,
                             &s.flushed,  &s.nan_in, &s.inf_in,       &s.nan_produced,  &s.nonfinite_out, &s.error_count, &s.rel_error_count};
  for (std::size_t i = 0; i < 14; ++i) *counts[i] = count_from(j.at(i));
  s.max_abs_error = unhex(j.at(14));
  s.max_rel_error = unhex(j.at(15));
  s.sum_rel_error = unhex(j.at(16));
  s.sum_sq_rel_error = unhex(j.at(17));
  return s;
}

// The nonzero binades only: [binade, count, powers of two].
Json input_json(const InputSummary& in) {
  Json binades = Json::array();
  for (std::size_t b = 0; b < in.binade_count.size(); ++b) {
    if (in.binade_count[b] != 0) {
      binades.push_back({static_cast<int>(b) + InputSummary::min_binade, in.binade_count[b], in.power_of_two_count[b]});
    }
  }
  return {{"values", in.values}, {"nan", in.nan}, {"inf", in.inf}, {"zero", in.zero}, {"amax", hex(in.amax)}, {"binades", binades}};
}

InputSummary input_from(const Json& j) {
  InputSummary in;
  in.values = count_from(j.at("values"));
  in.nan = count_from(j.at("nan"));
  in.inf = count_from(j.at("inf"));
  in.zero = count_from(j.at("zero"));
  in.amax = unhex(j.at("amax"));
  for (const Json& b : j.at("binades")) {
    const int binade = int_from(b.at(0));
    if (binade < InputSummary::min_binade || binade > InputSummary::max_binade) throw std::invalid_argument("binade out of range");
    in.binade_count[static_cast<std::size_t>(binade - InputSummary::min_binade)] = count_from(b.at(1));
    in.power_of_two_count[static_cast<std::size_t>(binade - InputSummary::min_binade)] = count_from(b.at(2));
  }
  return in;
}

// The first option two runs disagree on, as "NAME: A here, B there".
std::string first_difference(const Json& a, const Json& b) {
  for (const auto& [key, value] : a.items()) {
    const std::string there = b.contains(key) ? b[key].dump() : "(absent)";
    if (!b.contains(key) || b[key] != value) return key + " " + value.dump() + " here, " + there + " there";
  }
  for (const auto& [key, value] : b.items()) {
    if (!a.contains(key)) return key + " (absent) here, " + value.dump() + " there";
  }
  return "";
}

}  // namespace

void add_model_totals(AnalysisRun& run) {
  // Results: after each checkpoint's last row, its totals per format (formats in the order they came).
  std::vector<Result> results;
  for (std::size_t i = 0; i < run.results.size();) {
    const std::string& model = run.results[i].model;
    std::size_t end = i;
    while (end < run.results.size() && run.results[end].model == model) results.push_back(run.results[end++]);
    if (!model.empty()) {
      InputSummary input;
      for (const TensorHistogram& h : run.histograms) {
        if (h.model == model) input += h.input;
      }
      std::vector<Result> totals;
      for (std::size_t r = i; r < end; ++r) {
        const Result& row = run.results[r];
        auto it = std::find_if(totals.begin(), totals.end(), [&](const Result& t) { return t.format == row.format; });
        if (it == totals.end()) {
          // No best scale of its own: each tensor has its own.
          const TensorOutcome none{row.format, {}, row.outcome.block_scaled, std::nullopt, 0};
          totals.push_back({model, model, whole_model, row.format, row.scale, 0, {}, none, input.amax});
          it = totals.end() - 1;
        }
        // Per-tensor scales (auto, amax) differ between tensors: the total has none of its own.
        if (it->scale != row.scale) it->scale = "per tensor";
        it->outcome.stats += row.outcome.stats;
      }
      for (Result& t : totals) {
        t.measures = measures_of(t.outcome.stats, input);
        results.push_back(std::move(t));
      }
    }
    i = end;
  }
  run.results = std::move(results);

  std::vector<TensorHistogram> histograms;
  for (std::size_t i = 0; i < run.histograms.size();) {
    const std::string& model = run.histograms[i].model;
    TensorHistogram total{model, model, whole_model, 0, {}};
    for (; i < run.histograms.size() && run.histograms[i].model == model; ++i) {
      total.input += run.histograms[i].input;
      histograms.push_back(run.histograms[i]);
    }
    if (!model.empty()) histograms.push_back(std::move(total));
  }
  run.histograms = std::move(histograms);
}

std::string partial_text(const AnalysisRun& run) {
  Json out;
  out["fmtcheck_partial"] = partial_layout;
  out["options"] = run.options;
  out["policy"] = run.policy;
  out["results"] = Json::array();
  for (const Result& r : run.results) {
    Json measures = Json::array();
    for (const auto& [name, value] : r.measures) measures.push_back({name, hex(value)});
    const TensorOutcome& o = r.outcome;
    out["results"].push_back({{"model", r.model}, {"file", r.file}, {"tensor", r.tensor}, {"position", r.position},
                              {"format", r.format}, {"scale", r.scale}, {"measures", measures}, {"stats", stats_json(o.stats)},
                              {"block_scaled", o.block_scaled}, {"best", o.best ? Json(*o.best) : Json(nullptr)},
                              {"underflow_at_best", o.underflow_at_best}, {"amax", hex(r.amax)}});
  }
  out["histograms"] = Json::array();
  for (const TensorHistogram& h : run.histograms) {
    out["histograms"].push_back(
        {{"model", h.model}, {"file", h.file}, {"tensor", h.tensor}, {"position", h.position}, {"input", input_json(h.input)}});
  }
  return out.dump() + "\n";
}

AnalysisRun read_partial(const std::string& path) {
  // A folder opens as a stream that merely reads nothing: refuse it by name.
  if (std::error_code ec; std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec)) {
    throw UsageError(path + ": not a regular file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(path + ": cannot open the partial result");
  std::ostringstream text;
  text << in.rdbuf();
  try {
    const Json j = Json::parse(text.str());
    if (!j.is_object() || !j.contains("fmtcheck_partial")) throw UsageError(path + ": not a partial result of fmtcheck analyze --partial");
    if (j["fmtcheck_partial"] != partial_layout) throw UsageError(path + ": partial result of another layout (" + j["fmtcheck_partial"].dump() + ")");
    AnalysisRun run;
    run.options = j.at("options");
    if (!run.options.is_object()) throw std::invalid_argument("options are not an object");
    // What printing the run needs (print_merged reads them).
    for (const char* key : {"formats", "scale", "scale_rule"}) run.options.at(key).get<std::string>();
    int_from(run.options.at("block"));
    run.policy = j.at("policy").get<std::string>();
    for (const Json& r : j.at("results")) {
      const std::string format = r.at("format").get<std::string>();
      const Json& best = r.at("best");
      const TensorOutcome outcome{format, stats_from(r.at("stats")), r.at("block_scaled").get<bool>(),
                                  best.is_null() ? std::nullopt : std::optional<int>(int_from(best)),
                                  count_from(r.at("underflow_at_best"))};
      Result result{r.at("model").get<std::string>(), r.at("file").get<std::string>(), r.at("tensor").get<std::string>(),
                    format, r.at("scale").get<std::string>(), count_from(r.at("position")),
                    {}, outcome, unhex(r.at("amax"))};
      for (const Json& m : r.at("measures")) result.measures.emplace_back(m.at(0).get<std::string>(), unhex(m.at(1)));
      run.results.push_back(std::move(result));
    }
    for (const Json& h : j.at("histograms")) {
      run.histograms.push_back({h.at("model").get<std::string>(), h.at("file").get<std::string>(), h.at("tensor").get<std::string>(),
                                count_from(h.at("position")), input_from(h.at("input"))});
    }
    return run;
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(path + ": damaged partial result: " + e.what());
  } catch (const std::invalid_argument& e) {
    throw UsageError(path + ": damaged partial result: " + e.what());
  }
}

AnalysisRun merge_runs(std::vector<std::pair<std::string, AnalysisRun>> runs) {
  if (runs.empty()) throw UsageError("merge needs at least one partial result");
  AnalysisRun merged;
  merged.options = runs.front().second.options;
  merged.policy = runs.front().second.policy;
  std::map<std::pair<std::string, std::string>, std::string> owner;  // (file, tensor) -> the partial holding it
  for (auto& [path, run] : runs) {
    if (run.options != merged.options) {
      throw UsageError(path + ": made with other options than " + runs.front().first + " (" +
                       first_difference(run.options, merged.options) + "); refusing to merge");
    }
    for (const TensorHistogram& h : run.histograms) {
      const auto [it, fresh] = owner.emplace(std::make_pair(h.file, h.tensor), path);
      if (!fresh) throw UsageError(path + ": tensor '" + h.tensor + "' of " + h.file + " is also in " + it->second);
    }
    std::move(run.results.begin(), run.results.end(), std::back_inserter(merged.results));
    std::move(run.histograms.begin(), run.histograms.end(), std::back_inserter(merged.histograms));
  }
  // A stable sort keeps each tensor's formats in the order they were given.
  const auto key = [](const auto& r) { return std::tie(r.model.empty() ? r.file : r.model, r.file, r.position); };
  std::stable_sort(merged.results.begin(), merged.results.end(), [&](const Result& a, const Result& b) { return key(a) < key(b); });
  std::stable_sort(merged.histograms.begin(), merged.histograms.end(),
                   [&](const TensorHistogram& a, const TensorHistogram& b) { return key(a) < key(b); });
  return merged;
}

}  // namespace fmtcheck::cli
