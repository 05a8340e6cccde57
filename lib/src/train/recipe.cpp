#include "fmtcheck/train/recipe.hpp"

#include <array>
#include <deque>
#include <mutex>

namespace fmtcheck::train {
namespace {

constexpr std::array<std::string_view, 16> names = {
    "fp32",         "tf32",            "tf32-rne",              "fp16",
    "bf16",         "fp8-delayed",     "fp8-current",           "mxfp8",
    "bf16-pure",    "bf16-pure-sr",    "bf16-pure-kahan",       "bf16-pure-fp32-states",
    "fp16-pure",    "fp16-pure-sr",    "fp16-pure-kahan",       "fp16-pure-fp32-states"};
constexpr std::array<std::string_view, 5> gpus = {"ampere", "ada", "hopper", "blackwell", "exact"};

Policy nvidia(Overflow overflow) {
  Policy p;
  p.overflow = overflow;
  p.nan = NanConvention::cuda;
  return p;
}

}  // namespace

Policy activation_policy() { return nvidia(Overflow::nosat); }

std::span<const std::string_view> recipe_names() { return names; }
std::span<const std::string_view> gpu_names() { return gpus; }

namespace {

// FMT-pure[-sr|-kahan|-fp32-states]: the FMT autocast recipe with its
// weights, gradients and (unless fp32-states) optimizer states in FMT.
std::optional<Recipe> find_pure_recipe(std::string_view name) {
  for (const std::string_view base : {"bf16", "fp16"}) {
    const std::string prefix = std::string(base) + "-pure";
    if (!name.starts_with(prefix)) continue;
    const std::string_view remedy = name.substr(prefix.size());
    if (!remedy.empty() && remedy != "-sr" && remedy != "-kahan" && remedy != "-fp32-states") return std::nullopt;
    Recipe r = *find_recipe(base);
    r.name = std::string(name);
    r.weights = r.forward;
    r.states = remedy == "-fp32-states" ? nullptr : r.forward;
    r.update = remedy == "-sr" ? WeightUpdate::stochastic : remedy == "-kahan" ? WeightUpdate::kahan : WeightUpdate::nearest;
    return r;
  }
  return std::nullopt;
}

// A format parsed from a recipe's name, kept for the life of the program
// (a Recipe points at its formats), one copy per distinct format.
const Format* interned(const Format& f) {
  static std::mutex lock;
  static std::deque<Format> kept;
  const std::lock_guard<std::mutex> held(lock);
  for (const Format& k : kept) {
    if (k == f) return &k;
  }
  return &kept.emplace_back(f);
}

// current:FWD[/GRAD], delayed:FWD[/GRAD] or mx:FMT with any formats fmtcheck
// parses (P3109 members, MX FP6/FP4 elements, eXmY): fp8-current's machinery
// (activations in bf16, saturating casts) for other formats. MX scales both
// operands of a GEMM per block, so its GEMMs take one element format.
std::optional<Recipe> find_scaled_recipe(std::string_view name) {
  const std::size_t colon = name.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  const std::string_view scaling = name.substr(0, colon), formats_text = name.substr(colon + 1);
  TensorScaling ts{};
  if (scaling == "current") {
    ts = TensorScaling::current;
  } else if (scaling == "delayed") {
    ts = TensorScaling::delayed;
  } else if (scaling == "mx") {
    ts = TensorScaling::mx;
  } else {
    return std::nullopt;
  }
  const std::size_t slash = formats_text.find('/');
  if (ts == TensorScaling::mx && slash != std::string_view::npos) return std::nullopt;  // MX: one element format
  const std::optional<Format> fwd = parse_format(formats_text.substr(0, slash));
  const std::optional<Format> grad =
      slash == std::string_view::npos ? fwd : parse_format(formats_text.substr(slash + 1));
  if (!fwd || !grad) return std::nullopt;
  Policy sat;
  sat.overflow = Overflow::sat;
  return Recipe{std::string(name), interned(*fwd), interned(*grad), &formats::bf16, sat, ts};
}

}  // namespace

std::optional<Recipe> find_recipe(std::string_view name) {
  if (name == "fp32") return Recipe{"fp32", nullptr, nullptr, nullptr, nvidia(Overflow::nosat)};
  // TF32 tensor cores read fp32 registers and ignore their low 13 bits;
  // cuBLAS's TF32 GEMMs (torch's allow_tf32) round the operands to nearest
  // even first (docs/hardware/NVIDIA-H200/torch/summary.md).
  if (name == "tf32" || name == "tf32-rne") {
    Policy operands = nvidia(Overflow::nosat);
    operands.rounding = name == "tf32" ? Rounding::rtz : Rounding::rne;
    return Recipe{std::string(name), &formats::tf32, &formats::tf32, nullptr, operands};
  }
  if (name == "fp16") {
    return Recipe{"fp16", &formats::fp16, &formats::fp16, &formats::fp16, nvidia(Overflow::nosat),
                  TensorScaling::none, true};
  }
  if (name == "bf16") return Recipe{"bf16", &formats::bf16, &formats::bf16, &formats::bf16, nvidia(Overflow::nosat)};
  // Transformer Engine's casts use cuda_fp8.h's saturating conversion.
  if (name == "fp8-delayed" || name == "fp8-current") {
    return Recipe{std::string(name), &formats::e4m3, &formats::e5m2, &formats::bf16, nvidia(Overflow::sat),
                  name == "fp8-delayed" ? TensorScaling::delayed : TensorScaling::current};
  }
  if (name == "mxfp8") {
    return Recipe{"mxfp8", &formats::e4m3, &formats::e4m3, &formats::bf16, nvidia(Overflow::sat), TensorScaling::mx};
  }
  if (auto r = find_scaled_recipe(name)) return r;
  return find_pure_recipe(name);
}

std::optional<std::string> unsupported(const Recipe& recipe, const TensorCoreModel& model) {
  if (recipe.scaling == TensorScaling::mx && model.name != "blackwell" && model.name != "exact") {
    return "recipe " + recipe.name + " needs MX (block-scaled) tensor cores, which " + model.name +
           " lacks: blackwell or exact";
  }
  for (const Format* f : {recipe.forward, recipe.gradient}) {
    if (f != nullptr && !model.for_input(*f)) {
      return "recipe " + recipe.name + " needs " + f->name + " tensor cores, which " + model.name + " lacks";
    }
  }
  return std::nullopt;
}

const TensorCoreModel* gpu_model(std::string_view gpu) {
  if (gpu == "hopper") return find_tensor_core_model("hopper-wgmma");
  return find_tensor_core_model(gpu);
}

}  // namespace fmtcheck::train
