// fmtcheck train: mixed-precision training emulated bit-exactly on the CPU,
// recipe against recipe. Each recipe trains the same model from the same
// initial weights on the same batches; the matmuls run on the tensor-core
// model of --gpu. Per-step CSV, JSON summary, a table at the end.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/command.hpp"
#include "common/output_file.hpp"
#include "common/progress.hpp"
#include "common/table.hpp"
#include "fmtcheck/train/digits.hpp"
#include "fmtcheck/train/trainer.hpp"
#include "fmtcheck/train/transformer.hpp"

namespace fmtcheck::cli {
namespace {

using train::StepRecord;

struct TrainArgs {
  std::string data, model = "mlp", recipes = "fp32,fp16,bf16,fp8-delayed,fp8-current", gpu = "hopper";
  std::size_t steps = 300;
  std::string optimizer = "sgd", amax_compute = "max";
  float lr = NAN;  // default per optimizer
  train::TrainConfig config;
  std::string csv, json;
};

// The model's data, split into training and held-out examples.
class Task {
 public:
  Task(const std::string& model, const std::string& path) : model_(model) {
    if (model == "mlp") {
      digits_ = train::split_digits(train::read_digits(path));
    } else {
      sort_ = train::split_sort_task(train::read_sort_task(path));
    }
  }
  [[nodiscard]] std::unique_ptr<train::Model> make_model(std::uint64_t seed) const {
    if (model_ == "mlp") return std::make_unique<train::DigitsMlp>(digits_.train, digits_.held_out, seed);
    return std::make_unique<train::SortTransformer>(sort_.train, sort_.held_out, seed);
  }

 private:
  std::string model_;
  train::DigitsSplit digits_;
  train::SortSplit sort_;
};

struct RecipeRun {
  train::Recipe recipe;
  std::vector<StepRecord> steps;
  train::Evaluation eval;
  double final_scale = 1;
  double seconds = 0;
  double multiply_adds = 0;  // per step
};

std::string join(std::span<const std::string_view> names) {
  std::string s;
  for (const std::string_view n : names) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

std::vector<train::Recipe> parse_recipes(const std::string& list, const TensorCoreModel& model, const std::string& gpu) {
  std::vector<train::Recipe> out;
  std::stringstream in(list);
  for (std::string name; std::getline(in, name, ',');) {
    const auto r = train::find_recipe(name);
    if (!r) throw UsageError("unknown --recipe '" + name + "': expected " + join(train::recipe_names()));
    if (const auto reason = train::unsupported(*r, model)) throw UsageError(*reason + " (--gpu " + gpu + ")");
    for (const train::Recipe& seen : out) {
      if (seen.name == name) throw UsageError("--recipe names " + name + " twice");
    }
    out.push_back(*r);
  }
  if (out.empty()) throw UsageError("--recipe names no recipe");
  return out;
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
  std::vector<std::string> headers = {"recipe", "step", "loss", "grad_norm", "loss_scale", "skipped"};
  for (const std::string& t : tensors) {
    for (const char* column : {"amax", "scale", "underflowed", "overflowed", "flushed", "saturated"}) {
      headers.push_back(t + ":" + column);
    }
  }
  Table table(headers);
  for (const RecipeRun& r : runs) {
    for (const StepRecord& s : r.steps) {
      std::vector<std::string> row = {r.recipe.name, std::to_string(s.step), shortest(s.loss), shortest(s.grad_norm),
                                      shortest(s.loss_scale), s.skipped ? "1" : "0"};
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
  out["recipes"] = nlohmann::ordered_json::array();
  for (const RecipeRun& r : runs) {
    std::uint64_t skipped = 0;
    for (const StepRecord& s : r.steps) skipped += s.skipped ? 1 : 0;
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
                              {"seconds", r.seconds},
                              {"seconds_per_million_multiply_adds",
                               r.seconds / (r.multiply_adds * static_cast<double>(r.steps.size())) * 1e6}});
  }
  OutputFile file(path);
  file.write(out.dump(2) + "\n");
  file.commit();
}

void print_table(const std::vector<RecipeRun>& runs) {
  Table table({"recipe", "late loss", "eval loss", "accuracy", "skipped", "final scale", "to zero", "overflow",
               "saturated", "seconds"});
  char buf[64];
  for (const RecipeRun& r : runs) {
    std::uint64_t skipped = 0;
    for (const StepRecord& s : r.steps) skipped += s.skipped ? 1 : 0;
    auto fixed = [&](const char* fmt, double v) { return (std::snprintf(buf, sizeof buf, fmt, v), std::string(buf)); };
    table.add_row({r.recipe.name, fixed("%.4f", late_loss(r)), fixed("%.4f", r.eval.loss),
                   fixed("%.1f%%", 100.0 * r.eval.accuracy), std::to_string(skipped), shortest(r.final_scale),
                   std::to_string(total(r, Flag::tiny_to_zero)), std::to_string(total(r, Flag::overflow)),
                   std::to_string(total(r, Flag::saturated)), fixed("%.2f", r.seconds)});
  }
  std::printf("%s", table.aligned().c_str());
}

int run_train(TrainArgs& a) {
  if (a.model != "mlp" && a.model != "transformer") {
    throw UsageError("unknown --model '" + a.model + "': expected mlp or transformer");
  }
  const TensorCoreModel* model = train::gpu_model(a.gpu);
  if (model == nullptr) throw UsageError("unknown --gpu '" + a.gpu + "': expected " + join(train::gpu_names()));
  const std::vector<train::Recipe> recipes = parse_recipes(a.recipes, *model, a.gpu);
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
  if (a.data.empty()) {
    throw UsageError("--data is required: data/digits/digits.csv.gz (mlp) or data/sort/sort.csv.gz (transformer)");
  }
  std::optional<Task> task;
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
    RecipeRun run{recipe, {}, {}, 1, 0, model_state->step_multiply_adds(a.config.batch)};
    train::Trainer trainer(recipe, a.config, *model_state, ops);
    for (std::size_t s = 0; s < a.steps; ++s) {
      run.steps.push_back(trainer.step());
      progress.update(runs.size() * a.steps + s + 1);
    }
    run.eval = trainer.evaluate();
    run.final_scale = trainer.loss_scale();
    run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    runs.push_back(std::move(run));
  }
  if (!a.csv.empty()) write_csv(a.csv, runs);
  if (!a.json.empty()) write_json(a.json, a, runs);
  std::printf("%s on %s, %zu steps of batch %zu, %s (lr %g), tensor cores: %s\n", a.model.c_str(), a.data.c_str(),
              a.steps, a.config.batch, a.optimizer.c_str(), static_cast<double>(a.config.optimizer.lr), model->name.c_str());
  print_table(runs);
  return 0;
}

const bool registered = register_command({
    "train", "mixed-precision training emulated bit-exactly: loss, loss scale, underflow per recipe", 78,
    [](CLI::App& sub) {
      auto a = std::make_shared<TrainArgs>();
      sub.add_option("--data", a->data,
                     "the model's data, gzip or plain: data/digits/digits.csv.gz (mlp), data/sort/sort.csv.gz (transformer)");
      sub.add_option("--model", a->model, "mlp (64-32-10 ReLU on the digits) or transformer (one block, sorting tokens)")
          ->capture_default_str();
      sub.add_option("--recipe", a->recipes, "comma-separated: fp32, fp16 (GradScaler), bf16, fp8-delayed, fp8-current, mxfp8")
          ->capture_default_str();
      sub.add_option("--gpu", a->gpu, "tensor-core model: ampere, ada, hopper, blackwell, exact")->capture_default_str();
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
      return std::function<int()>([a] { return run_train(*a); });
    }});

}  // namespace
}  // namespace fmtcheck::cli
