// fmtcheck train: mixed-precision training emulated bit-exactly on the CPU,
// recipe against recipe. Each recipe trains the same model from the same
// initial weights on the same batches; the matmuls run on the tensor-core
// model of --gpu. Per-step CSV, JSON summary, tables at the end, each within
// the terminal's 100 columns: training (with the updates pure low-precision
// weights lost) and what the casts did, memory per recipe, and last the
// trained weights' loss in other precisions with the verdict on which infer
// in which precision without loss.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/bundled_data.hpp"
#include "common/command.hpp"
#include "common/output_file.hpp"
#include "common/progress.hpp"
#include "common/table.hpp"
#include "fmtcheck/train/memory.hpp"
#include "fmtcheck/train/task.hpp"
#include "fmtcheck/train/trainer.hpp"

namespace fmtcheck::cli {
namespace {

using train::StepRecord;

struct TrainArgs {
  std::string data, model = "mlp", recipes = "fp32,fp16,bf16,fp8-delayed,fp8-current", gpu = "hopper";
  std::size_t steps = 300;
  std::string optimizer = "sgd", amax_compute = "max";
  float lr = NAN;  // default per optimizer
  train::TrainConfig config;
  std::string infer;
  bool infer_given = false;  // else: those of fp32, tf32, bf16, fp16, fp8-current that --gpu runs
  double infer_tolerance = 0.01;  // relative rise of the held-out loss that still counts as no loss
  double params = 0;  // also tabulate memory for a model this size
  std::string csv, json;
};

struct RecipeRun {
  train::Recipe recipe;
  std::vector<StepRecord> steps;
  train::Evaluation eval;
  std::vector<std::pair<std::string, train::Evaluation>> inference;  // under each --infer recipe
  train::MemoryUse memory;
  double final_scale = 1;
  double seconds = 0;
  double multiply_adds = 0;  // per step
};

std::string join(std::span<const std::string_view> names) {
  std::string s;
  for (const std::string_view n : names) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

std::vector<train::Recipe> parse_recipes(const std::string& option, const std::string& list, const TensorCoreModel& model,
                                         const std::string& gpu) {
  std::vector<train::Recipe> out;
  std::stringstream in(list);
  for (std::string name; std::getline(in, name, ',');) {
    const auto r = train::find_recipe(name);
    if (!r) throw UsageError("unknown " + option + " '" + name + "' (fmtcheck train --help lists the recipes)");
    if (const auto reason = train::unsupported(*r, model)) {
      throw UsageError(*reason + (gpu == model.name ? "" : " (--gpu " + gpu + ")"));
    }
    for (const train::Recipe& seen : out) {
      if (seen.name == name) throw UsageError(option + " names " + name + " twice");
    }
    out.push_back(*r);
  }
  if (out.empty()) throw UsageError(option + " names no recipe");
  return out;
}

struct Lost {
  std::uint64_t nonzero = 0, lost = 0;
  [[nodiscard]] double fraction() const { return nonzero == 0 ? 0.0 : static_cast<double>(lost) / static_cast<double>(nonzero); }
};

Lost lost(const StepRecord& s) {
  Lost l;
  for (const train::UpdateCounts& u : s.updates) l.nonzero += u.nonzero, l.lost += u.lost;
  return l;
}

Lost lost(const RecipeRun& r) {
  Lost l;
  for (const StepRecord& s : r.steps) {
    const Lost step = lost(s);
    l.nonzero += step.nonzero, l.lost += step.lost;
  }
  return l;
}

std::uint64_t total(const StepRecord& s, Flag f) {
  std::uint64_t n = 0;
  for (const auto& [name, t] : s.tensors) n += t.flags[f];
  return n;
}

std::uint64_t total(const RecipeRun& r, Flag f) {
  std::uint64_t n = 0;
  for (const StepRecord& s : r.steps) n += total(s, f);
  return n;
}

// Mean loss of the last tenth of the steps (at least one): where training got to.
double late_loss(const RecipeRun& r) {
  const std::size_t n = std::max<std::size_t>(1, r.steps.size() / 10);
  double sum = 0;
  for (std::size_t i = r.steps.size() - n; i < r.steps.size(); ++i) sum += r.steps[i].loss;
  return sum / static_cast<double>(n);
}

void write_csv(const std::string& path, const std::vector<RecipeRun>& runs) {
  std::vector<std::string> tensors;  // every recipe's tensors, in order of first appearance
  for (const RecipeRun& r : runs) {
    for (const StepRecord& s : r.steps) {
      for (const auto& [name, t] : s.tensors) {
        if (std::find(tensors.begin(), tensors.end(), name) == tensors.end()) tensors.push_back(name);
      }
    }
  }
  std::vector<std::string> parameters;
  for (const RecipeRun& r : runs) {
    for (const StepRecord& s : r.steps) {
      for (const train::UpdateCounts& u : s.updates) {
        if (std::find(parameters.begin(), parameters.end(), u.name) == parameters.end()) parameters.push_back(u.name);
      }
    }
  }
  std::vector<std::string> headers = {"recipe",  "step",         "loss",           "grad_norm",
                                      "loss_scale", "skipped", "nonzero_updates", "lost_updates"};
  for (const std::string& t : tensors) {
    for (const char* column : {"amax", "scale", "underflowed", "overflowed", "flushed", "saturated"}) {
      headers.push_back(t + ":" + column);
    }
  }
  for (const std::string& p : parameters) headers.push_back(p + ":lost_updates");
  Table table(headers);
  for (const RecipeRun& r : runs) {
    for (const StepRecord& s : r.steps) {
      const Lost step_lost = lost(s);
      std::vector<std::string> row = {r.recipe.name,          std::to_string(s.step),  shortest(s.loss),
                                      shortest(s.grad_norm),  shortest(s.loss_scale), s.skipped ? "1" : "0",
                                      std::to_string(step_lost.nonzero), std::to_string(step_lost.lost)};
      for (const std::string& name : tensors) {
        const auto it = std::find_if(s.tensors.begin(), s.tensors.end(), [&](const auto& t) { return t.first == name; });
        if (it == s.tensors.end()) {
          row.insert(row.end(), 6, "");
          continue;
        }
        const train::TensorStats& t = it->second;
        for (const std::string& v : {shortest(t.amax), shortest(t.scale), std::to_string(t.flags[Flag::tiny_to_zero]),
                                     std::to_string(t.flags[Flag::overflow]), std::to_string(t.flags[Flag::flushed]),
                                     std::to_string(t.flags[Flag::saturated])}) {
          row.push_back(v);
        }
      }
      for (const std::string& name : parameters) {
        const auto it = std::find_if(s.updates.begin(), s.updates.end(), [&](const auto& u) { return u.name == name; });
        row.push_back(it == s.updates.end() ? "" : std::to_string(it->lost));
      }
      table.add_row(std::move(row));
    }
  }
  OutputFile file(path);
  file.write(table.csv());
  file.commit();
}

void write_json(const std::string& path, const TrainArgs& a, const std::vector<RecipeRun>& runs) {
  nlohmann::ordered_json out;
  out["model"] = a.model;
  out["gpu"] = a.gpu;
  out["steps"] = a.steps;
  out["batch"] = a.config.batch;
  out["optimizer"] = a.optimizer;
  out["multiply_adds_per_step"] = runs.front().multiply_adds;
  out["params"] = a.params;
  out["recipes"] = nlohmann::ordered_json::array();
  for (const RecipeRun& r : runs) {
    std::uint64_t skipped = 0;
    for (const StepRecord& s : r.steps) skipped += s.skipped ? 1 : 0;
    nlohmann::ordered_json lost_per_step = nlohmann::ordered_json::array(), inference = nlohmann::ordered_json::array();
    nlohmann::ordered_json lost_per_parameter = nlohmann::ordered_json::object();
    for (const StepRecord& s : r.steps) {
      lost_per_step.push_back(lost(s).lost);
      for (const train::UpdateCounts& u : s.updates) {
        lost_per_parameter[u.name] = lost_per_parameter.value(u.name, std::uint64_t{0}) + u.lost;
      }
    }
    for (const auto& [name, e] : r.inference) {
      inference.push_back({{"recipe", name}, {"eval_loss", e.loss}, {"accuracy", e.accuracy},
                           {"loss_change", static_cast<double>(e.loss) - static_cast<double>(r.eval.loss)},
                           {"accuracy_change", e.accuracy - r.eval.accuracy}});
    }
    auto memory = [&](const train::MemoryUse& m) {
      nlohmann::ordered_json j = {{"weights", m.weights}, {"master", m.master}, {"gradients", m.gradients},
                                  {"optimizer_states", m.states}};
      if (m.activations) j["activations"] = *m.activations;
      j["total"] = m.total();
      return j;
    };
    const Lost run_lost = lost(r);
    out["recipes"].push_back({{"recipe", r.recipe.name},
                              {"final_loss", r.steps.back().loss},
                              {"late_loss", late_loss(r)},
                              {"eval_loss", r.eval.loss},
                              {"accuracy", r.eval.accuracy},
                              {"skipped_steps", skipped},
                              {"final_scale", r.final_scale},
                              {"underflowed", total(r, Flag::tiny_to_zero)},
                              {"overflowed", total(r, Flag::overflow)},
                              {"saturated", total(r, Flag::saturated)},
                              {"flushed", total(r, Flag::flushed)},
                              {"nonzero_updates", run_lost.nonzero},
                              {"lost_updates", run_lost.lost},
                              {"lost_fraction", run_lost.fraction()},
                              {"lost_updates_per_step", lost_per_step},
                              {"lost_updates_per_parameter", lost_per_parameter},
                              {"inference", inference},
                              {"memory_bytes", memory(r.memory)},
                              {"seconds", r.seconds},
                              {"seconds_per_million_multiply_adds",
                               r.seconds / (r.multiply_adds * static_cast<double>(r.steps.size())) * 1e6}});
    if (a.params > 0) {
      out["recipes"].back()["memory_bytes_at_params"] =
          memory(train::memory_use(r.recipe, a.config.optimizer, a.params));
    }
  }
  OutputFile file(path);
  file.write(out.dump(2) + "\n");
  file.commit();
}

// printf of one number, as a string.
std::string fixed(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

// Training per recipe in two tables, each narrow enough for the terminal even
// with the longest recipe names: what the loss did, then what the casts did.
void print_training(const std::vector<RecipeRun>& runs) {
  Table loss({"recipe", "late loss", "eval loss", "accuracy", "lost updates", "seconds"});
  Table casts({"recipe", "to zero", "overflow", "saturated", "skipped", "final scale"});
  for (const RecipeRun& r : runs) {
    std::uint64_t skipped = 0;
    for (const StepRecord& s : r.steps) skipped += s.skipped ? 1 : 0;
    loss.add_row({r.recipe.name, fixed("%.4f", late_loss(r)), fixed("%.4f", r.eval.loss),
                  fixed("%.1f%%", 100.0 * r.eval.accuracy), fixed("%.1f%%", 100.0 * lost(r).fraction()),
                  fixed("%.2f", r.seconds)});
    casts.add_row({r.recipe.name, std::to_string(total(r, Flag::tiny_to_zero)), std::to_string(total(r, Flag::overflow)),
                   std::to_string(total(r, Flag::saturated)), std::to_string(skipped), shortest(r.final_scale)});
  }
  std::printf("%s\ncasts and loss scaling: values cast to zero, overflowed (saturated: clamped to the maximum)\n%s",
              loss.aligned().c_str(), casts.aligned().c_str());
}

// "a", "a and b", "a, b and c".
std::string spoken_list(const std::vector<std::string>& items) {
  std::string s;
  for (std::size_t i = 0; i < items.size(); ++i) {
    s += (i == 0 ? "" : i + 1 == items.size() ? " and " : ", ") + items[i];
  }
  return s;
}

// Whether weights lose nothing when served under another recipe: held-out
// accuracy no lower and loss at most `tolerance` (relative) higher than the
// float32 evaluation. A NaN or infinite loss loses.
bool infers_without_loss(const train::Evaluation& inferred, const train::Evaluation& float32, double tolerance) {
  const double rise = static_cast<double>(inferred.loss) - static_cast<double>(float32.loss);
  return inferred.accuracy >= float32.accuracy && rise <= tolerance * std::abs(static_cast<double>(float32.loss));
}

// Each trained recipe's weights under each --infer recipe: the held-out losses
// (as many columns to a table as fit the terminal), the changes beyond the
// tolerance, and which weights infer in which precision without loss.
void print_inference(const std::vector<RecipeRun>& runs, double tolerance) {
  const std::size_t inferred = runs.front().inference.size();
  const std::string corner = "trained \\ inferred";
  std::size_t name_width = corner.size();
  for (const RecipeRun& r : runs) name_width = std::max(name_width, r.recipe.name.size());
  std::printf("\ninference in another precision: held-out loss of each recipe's weights under each recipe's casts\n");
  const auto cell = [&](const RecipeRun& r, std::size_t i) { return fixed("%.4f", r.inference[i].second.loss); };
  for (std::size_t first = 0; first < inferred;) {
    // Each column as wide as its widest cell or header, two spaces apart.
    std::size_t last = first, width = name_width;
    while (last < inferred) {
      std::size_t column = runs.front().inference[last].first.size();
      for (const RecipeRun& r : runs) column = std::max(column, cell(r, last).size());
      column += 2;
      if (last > first && width + column > terminal_width) break;
      width += column;
      ++last;
    }
    std::vector<std::string> headers = {corner};
    for (std::size_t i = first; i < last; ++i) headers.push_back(runs.front().inference[i].first);
    Table table(headers);
    for (const RecipeRun& r : runs) {
      std::vector<std::string> row = {r.recipe.name};
      for (std::size_t i = first; i < last; ++i) row.push_back(cell(r, i));
      table.add_row(std::move(row));
    }
    std::printf("%s", table.aligned().c_str());
    first = last;
  }

  const std::string bound = shortest(100 * tolerance) + "%";
  std::vector<std::string> changes;
  for (const RecipeRun& r : runs) {
    for (const auto& [name, e] : r.inference) {
      if (infers_without_loss(e, r.eval, tolerance)) continue;
      const double rise = static_cast<double>(e.loss) - static_cast<double>(r.eval.loss);
      std::string change = "  " + r.recipe.name + " weights in " + name + ": loss " + fixed("%+.4f", rise) + " (" +
                           fixed("%+.2f%%", 100.0 * rise / static_cast<double>(r.eval.loss)) + ")";
      if (e.accuracy != r.eval.accuracy) change += ", accuracy " + fixed("%+.1f%%", 100.0 * (e.accuracy - r.eval.accuracy));
      changes.push_back(change + "\n");
    }
  }
  if (!changes.empty()) {
    std::printf("changes from the float32 evaluation beyond %s more loss or any lost accuracy:\n", bound.c_str());
    for (const std::string& c : changes) std::printf("%s", c.c_str());
  }

  // Inferred recipes that the same trained recipes pass, together: one clause each.
  std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> groups;  // (trained, inferred)
  for (std::size_t i = 0; i < inferred; ++i) {
    std::vector<std::string> passing;
    for (const RecipeRun& r : runs) {
      if (infers_without_loss(r.inference[i].second, r.eval, tolerance)) passing.push_back(r.recipe.name);
    }
    auto same = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == passing; });
    if (same == groups.end()) same = groups.insert(groups.end(), {passing, {}});
    same->second.push_back(runs.front().inference[i].first);
  }
  std::string clauses;
  for (const auto& [trained, precisions] : groups) {
    const std::string whose = trained.size() == runs.size() ? "every recipe's weights"
                              : trained.empty()            ? "no recipe's weights"
                                                           : "those of " + spoken_list(trained);
    clauses += (clauses.empty() ? "" : "; ") + whose + " in " + spoken_list(precisions);
  }
  std::printf("%s", wrap("", "Inference without loss (accuracy no lower, held-out loss at most " + bound +
                                 " higher; --infer-tolerance): " + clauses + ".",
                         terminal_width)
                        .c_str());
}

// Bytes in the largest binary unit that leaves at least 1 (0 as 0).
std::string binary_size(double bytes) {
  if (bytes == 0) return "0";
  if (bytes < 1024) return fixed("%.0f B", bytes);
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  for (bytes /= 1024; bytes >= 1024 && u < 3; bytes /= 1024) ++u;
  return fixed("%.1f ", bytes) + units[u];
}

void print_memory(const std::string& title, const std::vector<RecipeRun>& runs, const TrainArgs& a, double params) {
  Table table({"recipe", "weights", "master", "gradients", "optimizer states", "activations", "total"});
  for (const RecipeRun& r : runs) {
    const train::MemoryUse m = params > 0 ? train::memory_use(r.recipe, a.config.optimizer, params) : r.memory;
    table.add_row({r.recipe.name, binary_size(m.weights), binary_size(m.master), binary_size(m.gradients), binary_size(m.states),
                   m.activations ? binary_size(*m.activations) : "-", binary_size(m.total())});
  }
  std::printf("\n%s\n%s", title.c_str(), table.aligned().c_str());
}

int run_train(TrainArgs& a) {
  if (a.model != "mlp" && a.model != "transformer") {
    throw UsageError("unknown --model '" + a.model + "': expected mlp or transformer");
  }
  const TensorCoreModel* model = train::gpu_model(a.gpu);
  if (model == nullptr) {
    throw UsageError("unknown --gpu '" + a.gpu + "': expected " + join(train::gpu_names()) +
                     " or an mma --model");
  }
  const std::vector<train::Recipe> recipes = parse_recipes("--recipe", a.recipes, *model, a.gpu);
  std::vector<train::Recipe> inferred;
  if (a.infer_given && !a.infer.empty()) inferred = parse_recipes("--infer", a.infer, *model, a.gpu);
  if (!a.infer_given) {
    for (const std::string_view name : {"fp32", "tf32", "bf16", "fp16", "fp8-current"}) {
      const train::Recipe r = *train::find_recipe(name);
      if (!train::unsupported(r, *model)) inferred.push_back(r);
    }
  }
  if (!(a.params >= 0) || !std::isfinite(a.params)) throw UsageError("--params must be a number of parameters >= 0");
  if (!(a.infer_tolerance >= 0) || !std::isfinite(a.infer_tolerance)) {
    throw UsageError("--infer-tolerance must be a fraction >= 0 (0.01: the loss may rise by 1%)");
  }
  if (a.config.recipe.sr_bits < 1 || a.config.recipe.sr_bits > 32) throw UsageError("--sr-bits must be 1 to 32");
  if (a.steps == 0) throw UsageError("--steps must be at least 1");
  if (a.config.batch == 0) throw UsageError("--batch must be at least 1");
  if (a.optimizer != "sgd" && a.optimizer != "adam") throw UsageError("unknown --optimizer '" + a.optimizer + "': expected sgd or adam");
  a.config.optimizer.kind = a.optimizer == "sgd" ? train::OptimizerConfig::Kind::sgd : train::OptimizerConfig::Kind::adam;
  if (!std::isnan(a.lr) && !(a.lr > 0 && std::isfinite(a.lr))) throw UsageError("--lr must be a positive number");
  a.config.optimizer.lr = !std::isnan(a.lr) ? a.lr : a.optimizer == "sgd" ? 0.05f : 1e-3f;
  if (a.amax_compute != "max" && a.amax_compute != "most_recent") {
    throw UsageError("unknown --amax-compute '" + a.amax_compute + "': expected max or most_recent");
  }
  a.config.recipe.amax_compute = a.amax_compute == "max" ? AmaxCompute::max : AmaxCompute::most_recent;
  if (a.config.recipe.amax_history < 1) throw UsageError("--amax-history must be at least 1");
  if (a.config.recipe.scaler.growth_interval < 1) throw UsageError("--growth-interval must be at least 1");
  if (!(a.config.recipe.scaler.init_scale > 0) || !std::isfinite(a.config.recipe.scaler.init_scale)) {
    throw UsageError("--init-scale must be a positive finite number");
  }
  if (a.data.empty()) a.data = bundled_data(a.model == "mlp" ? "digits/digits.csv.gz" : "sort/sort.csv.gz", "--data");
  std::optional<train::Task> task;
  try {
    task.emplace(a.model, a.data);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }

  train::EmulatedOps ops(*model);
  std::vector<RecipeRun> runs;
  Progress progress("train", recipes.size() * a.steps);
  for (const train::Recipe& recipe : recipes) {
    const auto start = std::chrono::steady_clock::now();
    const std::unique_ptr<train::Model> model_state = task->make_model(a.config.seed);
    RecipeRun run{recipe, {}, {}, {}, {}, 1, 0, model_state->step_multiply_adds(a.config.batch)};
    train::Trainer trainer(recipe, a.config, *model_state, ops);
    for (std::size_t s = 0; s < a.steps; ++s) {
      run.steps.push_back(trainer.step());
      progress.update(runs.size() * a.steps + s + 1);
    }
    run.eval = trainer.evaluate();
    run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();  // training only
    for (const train::Recipe& r : inferred) run.inference.emplace_back(r.name, trainer.evaluate(r));
    double parameters = 0;
    for (const train::Parameter* p : model_state->parameters()) parameters += static_cast<double>(p->value.size());
    run.memory = train::memory_use(recipe, a.config.optimizer, parameters, model_state->saved_activations(a.config.batch));
    run.final_scale = trainer.loss_scale();
    runs.push_back(std::move(run));
  }
  if (!a.csv.empty()) write_csv(a.csv, runs);
  if (!a.json.empty()) write_json(a.json, a, runs);
  char lr[32];
  std::snprintf(lr, sizeof lr, "%g", static_cast<double>(a.config.optimizer.lr));
  std::printf("%s", wrap("", a.model + " on " + a.data + ", " + std::to_string(a.steps) + " steps of batch " +
                                 std::to_string(a.config.batch) + ", " + a.optimizer + " (lr " + lr +
                                 "), tensor cores: " + model->name,
                         terminal_width)
                        .c_str());
  print_training(runs);
  print_memory("memory of the emulated model (batch " + std::to_string(a.config.batch) + ")", runs, a, 0);
  if (a.params > 0) {
    print_memory("memory at --params " + shortest(a.params) + " (activations depend on batch, sequence and architecture)",
                 runs, a, a.params);
  }
  // Last, so that the output ends with what the run means for serving the weights.
  if (!inferred.empty()) print_inference(runs, a.infer_tolerance);
  return 0;
}

const bool registered = register_command({
    "train", "mixed-precision training emulated bit-exactly: loss, loss scale, underflow per recipe", 78,
    [](CLI::App& sub) {
      auto a = std::make_shared<TrainArgs>();
      sub.add_option("--data", a->data,
                     "the model's data, gzip or plain (default: the bundled data/digits/digits.csv.gz for mlp, "
                     "data/sort/sort.csv.gz for transformer, found beside the executable)");
      sub.add_option("--model", a->model, "mlp (64-32-10 ReLU on the digits) or transformer (one block, sorting tokens)")
          ->capture_default_str();
      sub.add_option("--recipe", a->recipes,
                     "comma-separated: fp32, tf32 (truncated operands), tf32-rne (rounded, as cuBLAS), "
                     "fp16 (GradScaler), bf16, fp8-delayed, fp8-current, mxfp8; pure "
                     "low precision (no fp32 master) bf16-pure, fp16-pure, each also -sr, -kahan, -fp32-states; "
                     "other formats (P3109, MX FP6/FP4, eXmY; --gpu exact) as current:FMT[/GRAD_FMT], "
                     "delayed:FMT[/GRAD_FMT] or mx:FMT")
          ->capture_default_str();
      CLI::Option* infer = sub.add_option(
          "--infer", a->infer,
          "evaluate the trained weights under these recipes' casts too (empty: none; default: those of fp32, tf32, "
          "bf16, fp16, fp8-current that --gpu runs)");
      sub.add_option("--infer-tolerance", a->infer_tolerance,
                     "--infer: the relative rise of the held-out loss that still counts as inference without loss")
          ->capture_default_str();
      sub.add_option("--params", a->params, "also tabulate the memory of a model with this many parameters (7e9)");
      sub.add_option("--sr-bits", a->config.recipe.sr_bits, "-sr recipes: random bits per stochastic rounding")
          ->capture_default_str();
      sub.add_option("--sr-seed", a->config.recipe.sr_seed, "-sr recipes: seed of the random stream")->capture_default_str();
      sub.add_option("--gpu", a->gpu,
                     "tensor-core model: ampere, ada, hopper (its wgmma), blackwell, exact, or any preset of "
                     "fmtcheck mma --model (volta, mi300x, ...)")
          ->capture_default_str();
      sub.add_option("--steps", a->steps, "training steps per recipe")->capture_default_str();
      sub.add_option("--batch", a->config.batch, "examples (images, sequences) per step")->capture_default_str();
      sub.add_option("--optimizer", a->optimizer, "sgd (momentum) or adam")->capture_default_str();
      sub.add_option("--lr", a->lr, "learning rate (default 0.05 for sgd, 0.001 for adam)");
      sub.add_option("--momentum", a->config.optimizer.momentum, "sgd momentum")->capture_default_str();
      sub.add_option("--clip", a->config.clip, "max gradient norm (0: no clipping)")->capture_default_str();
      sub.add_option("--seed", a->config.seed, "seed of the initial weights")->capture_default_str();
      sub.add_option("--init-scale", a->config.recipe.scaler.init_scale, "fp16: GradScaler's initial scale")
          ->capture_default_str();
      sub.add_option("--growth-interval", a->config.recipe.scaler.growth_interval,
                     "fp16: finite steps before the scale grows")->capture_default_str();
      sub.add_option("--amax-history", a->config.recipe.amax_history, "fp8-delayed: amax history length")
          ->capture_default_str();
      sub.add_option("--amax-compute", a->amax_compute, "fp8-delayed: max or most_recent")->capture_default_str();
      sub.add_option("--margin", a->config.recipe.margin, "fp8: scale = fp8_max / amax / 2^margin")->capture_default_str();
      sub.add_option("--csv", a->csv, "per-step CSV: loss, gradient norm, loss scale, skipped, per-tensor amax and counts");
      sub.add_option("--json", a->json, "summary per recipe as JSON");
      return std::function<int()>([a, infer] {
        a->infer_given = infer->count() > 0;
        return run_train(*a);
      });
    }});

}  // namespace
}  // namespace fmtcheck::cli
