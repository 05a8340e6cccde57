// fmtcheck mma: tensor-core dot products D = A·B + C under a bit-exact model,
// on case files in the layout of the published GPU measurements, and
// --check against those measurements.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fmt/format.h>
#include <map>

#include "common/command.hpp"
#include "common/options.hpp"
#include "common/output_file.hpp"
#include "common/tensor_core_files.hpp"
#include "fmtcheck/core/convert.hpp"
#include "fmtcheck/tensor_core/tensor_core.hpp"

namespace fmtcheck::cli {
namespace {

namespace fs = std::filesystem;

// Cases cut from the operand streams: case i uses a[i*k .. i*k+k).
struct Cases {
  std::vector<std::uint32_t> a, b, c;  // c: float32 bits, one per case
  std::size_t k = 0;
  [[nodiscard]] std::size_t count() const { return c.size(); }
};

Cases load_cases(const std::string& a_path, const std::string& b_path, const std::string& c_path, std::size_t k) {
  Cases cs;
  cs.a = read_hex_words(a_path);
  cs.b = read_hex_words(b_path);
  if (cs.a.size() != cs.b.size()) {
    throw UsageError(fmt::format("'{}' holds {} values but '{}' holds {}", a_path, cs.a.size(), b_path, cs.b.size()));
  }
  if (!c_path.empty()) {
    cs.c = read_binary_lines(c_path);
    if (cs.c.empty()) throw UsageError("'" + c_path + "' holds no cases");
    // K per case is what the operand stream divides into.
    if (k == 0) k = cs.a.size() / cs.c.size();
  }
  if (k == 0) throw UsageError("give --k (or --c, from which K per case follows)");
  if (cs.a.size() % k != 0 || (!cs.c.empty() && cs.a.size() != k * cs.c.size())) {
    throw UsageError(fmt::format("'{}' holds {} values: not {} cases of K = {}", a_path, cs.a.size(),
                                 cs.c.empty() ? cs.a.size() / k : cs.c.size(), k));
  }
  if (cs.c.empty()) cs.c.assign(cs.a.size() / k, 0);
  cs.k = k;
  return cs;
}

// An operand from the files' float32 bits: tf32 registers are float32 and go
// to the model as they are (the tensor core ignores their low 13 bits); the
// other types are converted, exactly since the values are representable.
std::uint64_t operand_bits(std::uint32_t f32, const Format& input) {
  if (input.storage_bits == 32) return f32;
  const Conversion r = convert_bits(f32, formats::fp32, input);
  if (r.flags.has(Flag::inexact) || r.flags.has(Flag::overflow)) {
    throw UsageError(fmt::format("operand {:08x} is not a {} value", f32, input.name));
  }
  return r.bits;
}

// D for every case, as float32 bits (fp16 results widened exactly, as in the
// published files). C comes as float32 and is rounded to nearest even when the
// output is fp16, as the authors' kernels did; zero_c ignores it (wgmma runs
// with a zero accumulator).
std::vector<std::uint32_t> run_cases(const DotModel& model, const Format& input, const Format& out, const Cases& cs,
                                     bool zero_c) {
  std::vector<std::uint32_t> d(cs.count());
  std::vector<std::uint64_t> a(cs.k), b(cs.k);
  for (std::size_t i = 0; i < cs.count(); ++i) {
    for (std::size_t j = 0; j < cs.k; ++j) {
      a[j] = operand_bits(cs.a[i * cs.k + j], input);
      b[j] = operand_bits(cs.b[i * cs.k + j], input);
    }
    const std::uint64_t c32 = zero_c ? 0 : cs.c[i];
    const std::uint64_t c = out == formats::fp32 ? c32 : convert_bits(c32, formats::fp32, out).bits;
    const std::uint64_t r = dot_product_add(model, input, a, b, c, out).bits;
    d[i] = static_cast<std::uint32_t>(out == formats::fp32 ? r : convert_bits(r, out, formats::fp32).bits);
  }
  return d;
}

Format output_or_throw(const std::string& text) {
  if (text == "fp32") return formats::fp32;
  if (text == "fp16") return formats::fp16;
  throw UsageError("bad --out '" + text + "': expected fp32 or fp16");
}

// "L=16, F=25, rtz to fp32": the parameters a result was computed with.
std::string describe(const DotModel& m, const Format& out) {
  const std::string block = m.block_size == DotModel::whole_k ? "all K" : fmt::format("L={}", m.block_size);
  const std::string align = m.fraction_bits == DotModel::exact_alignment ? "exact" : fmt::format("F={}", m.fraction_bits);
  if (out == formats::fp16) return fmt::format("{}, {}, {} to fp16", block, align, to_string(m.fp16_rounding));
  return fmt::format("{}, {}, {} to fp32{}", block, align, to_string(m.fp32_rounding),
                     m.fp32_fraction_bits == 23 ? "" : fmt::format(" with {} fraction bits", m.fp32_fraction_bits));
}

// ---- fmtcheck mma --model --type --out --a --b [--c] -------------------------

struct RunOptions {
  std::string model, type, out = "fp32", a, b, c, d = "-";
  std::size_t k = 0;
};

int run_model(const RunOptions& o) {
  const TensorCoreModel& model = tensor_core_model(o.model);
  const Format input = parse_format_option(o.type);
  const Format out = output_or_throw(o.out);
  const DotModel dot = model.arithmetic_for(input);
  const Cases cs = load_cases(o.a, o.b, o.c, o.k);
  OutputFile file(o.d);
  write_binary_lines(file, run_cases(dot, input, out, cs, false));
  file.commit();
  return 0;
}

// ---- fmtcheck mma --check DIR --model ARCH -----------------------------------

// How the published data was measured for one input type and output: which
// preset reproduces it, and whether C took part.
struct Instruction {
  std::string model;        // preset name; empty: no public model explains it
  bool zero_c = false;      // wgmma runs were made with a zero accumulator
  std::string unexplained;  // why there is no model
};

// The instruction the data's README names per GPU, input type and output;
// "blackwell" is B200's tcgen05.mma for every type (no Blackwell data is
// published beside the others yet).
Instruction instruction_for(const std::string& arch, const Format& input, const Format& out) {
  const bool fp8 = input == formats::e4m3 || input == formats::e5m2;
  if (arch == "hopper" && fp8) {
    if (out == formats::fp32) return {"hopper-wgmma", true, ""};
    return {"", false, "mma.sync m16n8k32 with an fp16 accumulator: unexplained, no public model"};
  }
  return {arch, false, ""};
}

struct FolderFiles {
  std::string a, b, c;
  std::map<std::string, std::string> d;  // output name -> file
};

FolderFiles find_files(const fs::path& dir) {
  FolderFiles f;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.size() < 6 || name.substr(name.size() - 4) != ".txt") continue;
    const std::string stem = name.substr(0, name.size() - 4);
    if (stem.starts_with("a_")) f.a = entry.path().string();
    if (stem.starts_with("b_")) f.b = entry.path().string();
    if (stem.starts_with("c_")) f.c = entry.path().string();
    if (stem.starts_with("d_")) f.d[stem.substr(stem.rfind('_') + 1)] = entry.path().string();
  }
  return f;
}

std::string hex_list(const std::vector<std::uint32_t>& v, std::size_t first, std::size_t n) {
  std::string s;
  for (std::size_t i = first; i < first + n; ++i) s += fmt::format("{}{:08x}", i == first ? "" : " ", v[i]);
  return s;
}

struct Tally {
  std::size_t matched = 0, cases = 0, files = 0;
};

int run_check(const std::string& dir, const std::string& arch, std::size_t show) {
  static const std::vector<std::string> arches = {"volta", "turing", "ampere", "ada", "hopper", "blackwell"};
  if (std::find(arches.begin(), arches.end(), arch) == arches.end()) {
    throw UsageError("bad --model '" + arch + "' for --check: expected volta, turing, ampere, ada, hopper or blackwell");
  }
  if (!find_tensor_core_model(arch)) {
    throw UsageError("no published tensor-core parameters for '" + arch + "' (see docs/tensor-core.md)");
  }
  if (!fs::is_directory(dir)) throw UsageError("--check '" + dir + "' is not a folder");
  std::vector<fs::path> folders;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_directory()) folders.push_back(entry.path());
  }
  std::sort(folders.begin(), folders.end());
  if (folders.empty()) throw UsageError("--check '" + dir + "' has no per-type subfolders");

  Tally checked, unexplained;
  std::vector<std::string> unexplained_lines;
  for (const fs::path& folder : folders) {
    std::string type = folder.filename().string();
    std::transform(type.begin(), type.end(), type.begin(), [](unsigned char ch) { return std::tolower(ch); });
    const Format input = parse_format_option(type);
    const FolderFiles files = find_files(folder);
    if (files.a.empty() || files.b.empty() || files.c.empty() || files.d.empty()) {
      throw UsageError("'" + folder.string() + "' lacks a_, b_, c_ or d_ files");
    }
    const Cases cs = load_cases(files.a, files.b, files.c, 0);
    for (const auto& [out_name, d_path] : files.d) {
      const Format out = output_or_throw(out_name);
      const std::vector<std::uint32_t> measured = read_binary_lines(d_path);
      if (measured.size() != cs.count()) {
        throw UsageError(fmt::format("'{}' holds {} results for {} cases", d_path, measured.size(), cs.count()));
      }
      const std::string label = fmt::format("{:<5} K={:<3} {} output", type, cs.k, out_name);
      const Instruction ins = instruction_for(arch, input, out);
      if (ins.model.empty()) {
        unexplained.cases += cs.count();
        ++unexplained.files;
        unexplained_lines.push_back(fmt::format("  {}: {} cases not compared ({})", label, cs.count(), ins.unexplained));
        continue;
      }
      const std::optional<DotModel> dot = tensor_core_model(ins.model).for_input(input);
      if (!dot) throw UsageError("model '" + ins.model + "' has no published arithmetic for " + input.name);
      const std::vector<std::uint32_t> got = run_cases(*dot, input, out, cs, ins.zero_c);
      std::size_t matched = 0;
      std::vector<std::size_t> bad;
      for (std::size_t i = 0; i < cs.count(); ++i) {
        if (got[i] == measured[i]) ++matched; else if (bad.size() < show) bad.push_back(i);
      }
      checked.matched += matched;
      checked.cases += cs.count();
      ++checked.files;
      fmt::print("  {}: {}/{} bit matches  [{} {}{}]\n", label, matched, cs.count(), ins.model, describe(*dot, out),
                 ins.zero_c ? ", C = 0" : "");
      for (const std::size_t i : bad) {
        fmt::print("    case {}: a = {}\n", i, hex_list(cs.a, i * cs.k, cs.k));
        fmt::print("    {:>{}}  b = {}\n", "", fmt::formatted_size("case {}:", i) - 2, hex_list(cs.b, i * cs.k, cs.k));
        fmt::print("      c = {:08x}  measured d = {:08x}  model d = {:08x}\n", ins.zero_c ? 0u : cs.c[i], measured[i],
                   got[i]);
      }
    }
  }
  fmt::print("{}: {}/{} bit matches over {} files\n", checked.matched == checked.cases ? "PASS" : "FAIL",
             checked.matched, checked.cases, checked.files);
  if (!unexplained_lines.empty()) {
    fmt::print("unexplained, no public model ({} files, {} cases; not counted):\n", unexplained.files, unexplained.cases);
    for (const std::string& line : unexplained_lines) fmt::print("{}\n", line);
  }
  return checked.matched == checked.cases ? 0 : 1;
}

const bool registered = register_command({
    "mma",
    "tensor-core dot products D = A*B + C under a bit-exact model; --check against GPU data",
    60,
    [](CLI::App& sub) -> std::function<int()> {
      auto o = std::make_shared<RunOptions>();
      auto check = std::make_shared<std::string>();
      auto show = std::make_shared<std::size_t>(5);
      std::string models;
      for (const TensorCoreModel& m : tensor_core_models()) models += "\n  " + m.name + ": " + m.description;
      sub.add_option("--model", o->model, "model (with --check: volta, turing, ampere, ada, hopper, blackwell):" + models)
          ->required();
      sub.add_option("--type", o->type, "input type: fp16, bf16, tf32, e4m3, e5m2");
      sub.add_option("--out", o->out, "output: fp32 or fp16")->capture_default_str();
      sub.add_option("--a", o->a, "A rows: float32 bit patterns in hex, K per case");
      sub.add_option("--b", o->b, "B columns: float32 bit patterns in hex, K per case");
      sub.add_option("--c", o->c, "C: one float32 bit pattern in binary per line (default: zero)");
      sub.add_option("--k", o->k, "K per case (default: from the count of C values)");
      sub.add_option("--d", o->d, "where D goes, one float32 bit pattern in binary per line")->capture_default_str();
      sub.add_option("--check", *check, "folder of published measurements for one GPU (subfolders per input type)");
      sub.add_option("--show", *show, "with --check: mismatches listed per file")->capture_default_str();
      return [o, check, show]() -> int {
        if (!check->empty()) return run_check(*check, o->model, *show);
        if (o->type.empty() || o->a.empty() || o->b.empty()) throw UsageError("mma needs --type, --a and --b (or --check DIR)");
        return run_model(*o);
      };
    },
});

}  // namespace
}  // namespace fmtcheck::cli
