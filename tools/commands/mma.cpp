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
#include "common/table.hpp"
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
std::vector<std::uint32_t> run_cases(const DotModel& model, const Format& input_a, const Format& input_b,
                                     const Format& out, const Cases& cs, bool zero_c) {
  std::vector<std::uint32_t> d(cs.count());
  std::vector<std::uint64_t> a(cs.k), b(cs.k);
  for (std::size_t i = 0; i < cs.count(); ++i) {
    for (std::size_t j = 0; j < cs.k; ++j) {
      a[j] = operand_bits(cs.a[i * cs.k + j], input_a);
      b[j] = operand_bits(cs.b[i * cs.k + j], input_b);
    }
    const std::uint64_t c32 = zero_c ? 0 : cs.c[i];
    const std::uint64_t c = out == formats::fp32 ? c32 : convert_bits(c32, formats::fp32, out).bits;
    const std::uint64_t r = dot_product_add(model, input_a, input_b, a, b, c, out).bits;
    d[i] = static_cast<std::uint32_t>(out == formats::fp32 ? r : convert_bits(r, out, formats::fp32).bits);
  }
  return d;
}

Format output_or_throw(const std::string& text) {
  if (text == "fp32") return formats::fp32;
  if (text == "fp16") return formats::fp16;
  throw UsageError("bad --out '" + text + "': expected fp32 or fp16");
}

// "" for one fused block, else how the structure combines the products.
std::string_view structure_name(DotStructure s) {
  switch (s) {
    case DotStructure::fused: return "";
    case DotStructure::fp16_groups: return "k mod 4 in {0,1} then {2,3} as fp16 blocks, C added last (rne), ";
    case DotStructure::pairwise: return "pairwise fp32 sums (rne), subnormals flushed, ";
    case DotStructure::late_c: return "C added late, ";
    case DotStructure::odd_even: return "even and odd k apart, C added late, ";
  }
  return "";
}

// "L=16, F=25, rtz to fp32": the parameters a result was computed with.
std::string describe(const DotModel& m, const Format& out) {
  const std::string block = fmt::format("{}{}", structure_name(m.structure),
                                        m.block_size == DotModel::whole_k ? "all K" : fmt::format("L={}", m.block_size));
  const std::string align = m.fraction_bits == DotModel::exact_alignment ? "exact" : fmt::format("F={}", m.fraction_bits);
  if (out == formats::fp16) return fmt::format("{}, {}, {} to fp16", block, align, to_string(m.fp16_rounding));
  return fmt::format("{}, {}, {} to fp32{}", block, align, to_string(m.fp32_rounding),
                     m.fp32_fraction_bits == 23 ? "" : fmt::format(" with {} fraction bits", m.fp32_fraction_bits));
}

// ---- fmtcheck mma --model --type --out --a --b [--c] -------------------------

struct RunOptions {
  std::string model, type, type_b, out = "fp32", a, b, c, d = "-";
  std::size_t k = 0;
};

int run_model(const RunOptions& o) {
  const TensorCoreModel& model = tensor_core_model(o.model);
  const Format input = parse_format_option(o.type);
  const Format input_b = o.type_b.empty() ? input : parse_format_option(o.type_b);
  const Format out = output_or_throw(o.out);
  const std::optional<DotModel> dot = model.for_inputs(input, input_b);
  if (!dot) {
    throw UsageError("model '" + model.name + "' has no published arithmetic for " + input.name +
                     (input_b == input ? "" : " x " + input_b.name) + " inputs");
  }
  if (out != formats::fp32 && !dot->writes_fp16) throw UsageError("model '" + model.name + "' writes fp32 only");
  const Cases cs = load_cases(o.a, o.b, o.c, o.k);
  OutputFile file(o.d);
  write_binary_lines(file, run_cases(*dot, input, input_b, out, cs, false));
  file.commit();
  return 0;
}

// ---- fmtcheck mma --check DIR --model ARCH -----------------------------------

// The NVIDIA instruction families whose arithmetic the presets model. wmma
// runs mma.sync's arithmetic (the presets say "mma.sync/wmma").
enum class Family { mma_sync, wgmma, tcgen05 };

std::string family_name(Family f) {
  switch (f) {
    case Family::mma_sync: return "mma.sync";
    case Family::wgmma: return "wgmma";
    case Family::tcgen05: return "tcgen05.mma";
  }
  return "";
}

// The family of a PTX mnemonic as `hw mma --cases` records it
// ("wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3").
std::optional<Family> family_of(std::string_view mnemonic) {
  if (mnemonic.starts_with("mma.") || mnemonic.starts_with("wmma.")) return Family::mma_sync;
  if (mnemonic.starts_with("wgmma.")) return Family::wgmma;
  if (mnemonic.starts_with("tcgen05.")) return Family::tcgen05;
  return std::nullopt;
}

// Each NVIDIA preset with the architecture and the instruction family it
// models: --check takes an architecture to the preset of the data's family,
// and checks that a preset it is given models that family.
struct PresetFamily {
  std::string_view preset, architecture;
  Family family;
};
constexpr PresetFamily preset_families[] = {
    {"volta", "volta", Family::mma_sync},         {"turing", "turing", Family::mma_sync},
    {"ampere", "ampere", Family::mma_sync},       {"ada", "ada", Family::mma_sync},
    {"hopper", "hopper", Family::mma_sync},       {"hopper-wgmma", "hopper", Family::wgmma},
    {"blackwell", "blackwell", Family::mma_sync}, {"blackwell-tcgen05", "blackwell", Family::tcgen05},
    {"blackwell-rtx", "blackwell-rtx", Family::mma_sync}};
// The names --check takes as an architecture of the published data.
constexpr std::string_view architectures[] = {"volta", "turing", "ampere", "ada", "hopper", "blackwell"};

const PresetFamily* preset_named(std::string_view preset) {
  for (const PresetFamily& p : preset_families) {
    if (p.preset == preset) return &p;
  }
  return nullptr;
}

const PresetFamily* preset_for(std::string_view architecture, Family family) {
  for (const PresetFamily& p : preset_families) {
    if (p.architecture == architecture && p.family == family) return &p;
  }
  return nullptr;
}

// How one D file is replayed: the preset, and whether C took part.
struct Instruction {
  std::string model;    // preset name
  bool zero_c = false;  // the published wgmma runs were made with a zero accumulator
};

// What the published data was measured with, where no instruction file
// says (its README, per GPU, input type and output): the architecture's
// mma.sync (and wmma), except H100's FP8 files with fp32 output, which wgmma
// measured with a zero accumulator.
Instruction published_instruction(std::string_view arch, const Format& input, const Format& out) {
  const bool fp8 = input == formats::e4m3 || input == formats::e5m2;
  const bool wgmma = arch == "hopper" && fp8 && out == formats::fp32;
  return {std::string(preset_for(arch, wgmma ? Family::wgmma : Family::mma_sync)->preset), wgmma};
}

// The instruction for one D file (`where` names it in errors). --preset: --model for every file, whatever
// the data says (to compare one instruction's model with another's data).
// Otherwise, where the folder's instruction file names the instruction, an
// architecture picks its preset of it, and a preset must model it: a
// mismatch is bad input, not a FAIL. Where no file says (the published data,
// older hardware runs), an architecture picks by published_instruction and
// a preset runs every file, as before instruction files existed.
Instruction instruction_for_check(const std::string& model, bool preset, const Format& input, const Format& out,
                                  const std::optional<std::string>& mnemonic, const std::string& where) {
  const bool is_arch = std::find(std::begin(architectures), std::end(architectures), model) != std::end(architectures);
  if (preset || (!mnemonic && !is_arch)) return {model, false};
  if (!mnemonic) return published_instruction(model, input, out);
  const std::optional<Family> family = family_of(*mnemonic);
  if (!family) {
    throw UsageError(where + " names '" + *mnemonic + "', an instruction fmtcheck has no model of (mma.sync, wmma, "
                     "wgmma, tcgen05.mma)");
  }
  const std::string measured = where + " was computed by " + family_name(*family);
  if (is_arch) {
    if (const PresetFamily* p = preset_for(model, *family)) return {std::string(p->preset), false};
    std::string having;
    for (const std::string_view a : architectures) {
      if (preset_for(a, *family)) having += (having.empty() ? "" : " or ") + std::string(a);
    }
    throw UsageError(measured + ", which " + model + " does not have: use --model " + having);
  }
  const PresetFamily* given = preset_named(model);
  if (given != nullptr && given->family != *family) {
    const PresetFamily* right = preset_for(given->architecture, *family);
    throw UsageError(measured + ", but --model " + model + " models " + family_name(given->family) + ": use " +
                     (right != nullptr ? "--model " + std::string(right->preset) : "a preset of " + family_name(*family)) +
                     ", or add --preset to compare anyway");
  }
  return {model, false};
}

struct FolderFiles {
  std::string a, b, c;
  std::map<std::string, std::string> d;  // output name -> file
  std::string instruction;              // the instruction file, empty where there is none
};

// The entries of a folder of --check, or one line saying why it cannot be read.
std::vector<fs::directory_entry> entries_of(const fs::path& dir) {
  std::error_code ec;
  std::vector<fs::directory_entry> out;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) out.push_back(*it);
  if (ec) throw UsageError("--check: cannot read the folder '" + dir.string() + "': " + ec.message());
  return out;
}

FolderFiles find_files(const fs::path& dir) {
  FolderFiles f;
  for (const auto& entry : entries_of(dir)) {
    const std::string name = entry.path().filename().string();
    if (name == instruction_file_name) f.instruction = entry.path().string();
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

// One D file to replay, with everything decided before any case runs, so
// that bad input (a mismatched instruction above all) prints nothing else.
struct Replay {
  std::string type, d_path, out_name;
  Format input, out;
  Instruction instruction;
  DotModel dot;
};

struct CheckFolder {
  FolderFiles files;
  std::vector<Replay> replays;
};

int run_check(const std::string& dir, const std::string& arch, bool preset, std::size_t show) {
  if (!find_tensor_core_model(arch)) {
    std::string names;
    for (const TensorCoreModel& m : tensor_core_models()) names += (names.empty() ? "" : ", ") + m.name;
    throw UsageError("bad --model '" + arch + "' for --check: expected an architecture (volta, turing, ampere, ada, "
                     "hopper, blackwell) or a preset (" + names + ")");
  }
  // With an error code: a name the system refuses (too long) is bad input too.
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    const std::string refused = lookup_refusal(ec);
    throw UsageError("--check '" + dir + "' is not a folder" + (refused.empty() ? "" : ": " + refused));
  }
  std::vector<fs::path> folders;
  for (const auto& entry : entries_of(dir)) {
    if (std::error_code ec; entry.is_directory(ec)) folders.push_back(entry.path());
  }
  std::sort(folders.begin(), folders.end());
  if (folders.empty()) throw UsageError("--check '" + dir + "' has no per-type subfolders");

  std::vector<CheckFolder> plan;
  for (const fs::path& folder : folders) {
    std::string type = folder.filename().string();
    std::transform(type.begin(), type.end(), type.begin(), [](unsigned char ch) { return std::tolower(ch); });
    const Format input = parse_format_option(type);
    CheckFolder f{find_files(folder), {}};
    if (f.files.a.empty() || f.files.b.empty() || f.files.c.empty() || f.files.d.empty()) {
      throw UsageError("'" + folder.string() + "' lacks a_, b_, c_ or d_ files");
    }
    std::map<std::string, std::string> mnemonics;  // D file name -> instruction
    if (!f.files.instruction.empty()) mnemonics = read_instruction_file(f.files.instruction);
    for (const auto& named : mnemonics) {  // not a structured binding: clang 14 cannot capture one
      const bool present = std::any_of(f.files.d.begin(), f.files.d.end(), [&](const auto& d) {
        return fs::path(d.second).filename() == named.first;
      });
      if (!present) throw UsageError("'" + f.files.instruction + "' names " + named.first + ", which is not in the folder");
    }
    for (const auto& [out_name, d_path] : f.files.d) {
      const Format out = output_or_throw(out_name);
      const auto named = mnemonics.find(fs::path(d_path).filename().string());
      const std::optional<std::string> mnemonic =
          named == mnemonics.end() ? std::nullopt : std::optional<std::string>(named->second);
      const Instruction ins = instruction_for_check(arch, preset, input, out, mnemonic,
                                                    "'" + f.files.instruction + "': " + fs::path(d_path).filename().string());
      const std::optional<DotModel> dot = tensor_core_model(ins.model).for_input(input);
      if (!dot) throw UsageError("model '" + ins.model + "' has no published arithmetic for " + input.name);
      f.replays.push_back({type, d_path, out_name, input, out, ins, *dot});
    }
    plan.push_back(std::move(f));
  }

  Tally checked;
  for (const CheckFolder& f : plan) {
    const Cases cs = load_cases(f.files.a, f.files.b, f.files.c, 0);
    for (const Replay& r : f.replays) {
      const std::vector<std::uint32_t> measured = read_binary_lines(r.d_path);
      if (measured.size() != cs.count()) {
        throw UsageError(fmt::format("'{}' holds {} results for {} cases", r.d_path, measured.size(), cs.count()));
      }
      const std::string label = fmt::format("{:<5} K={:<3} {} output", r.type, cs.k, r.out_name);
      const Instruction& ins = r.instruction;
      const std::vector<std::uint32_t> got = run_cases(r.dot, r.input, r.input, r.out, cs, ins.zero_c);
      std::size_t matched = 0;
      std::vector<std::size_t> bad;
      for (std::size_t i = 0; i < cs.count(); ++i) {
        if (got[i] == measured[i]) ++matched; else if (bad.size() < show) bad.push_back(i);
      }
      checked.matched += matched;
      checked.cases += cs.count();
      ++checked.files;
      fmt::print("{}", wrap(fmt::format("  {}: ", label),
                            fmt::format("{}/{} bit matches  [{} {}{}]", matched, cs.count(), ins.model,
                                        describe(r.dot, r.out), ins.zero_c ? ", C = 0" : ""),
                            terminal_width));
      // A case's K operands of A and B, as many to a line as fit.
      for (const std::size_t i : bad) {
        const std::string lead = fmt::format("    case {}: ", i);
        fmt::print("{}", wrap(lead + "a = ", hex_list(cs.a, i * cs.k, cs.k), terminal_width));
        fmt::print("{}", wrap(std::string(lead.size(), ' ') + "b = ", hex_list(cs.b, i * cs.k, cs.k), terminal_width));
        fmt::print("{}c = {:08x}  measured d = {:08x}  model d = {:08x}\n", std::string(lead.size(), ' '),
                   ins.zero_c ? 0u : cs.c[i], measured[i], got[i]);
      }
    }
  }
  fmt::print("{}: {}/{} bit matches over {} files\n", checked.matched == checked.cases ? "PASS" : "FAIL",
             checked.matched, checked.cases, checked.files);
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
      sub.add_option("--model", o->model, "model (with --check: an architecture, volta, turing, ampere, ada, hopper or "
                     "blackwell, whose preset of each file's instruction runs it, or a preset of that instruction):" + models)
          ->required();
      sub.add_option("--type", o->type, "input type of A (and B): fp16, bf16, tf32, e4m3, e5m2, e4m3fnuz, e5m2fnuz");
      sub.add_option("--type-b", o->type_b, "input type of B when it differs from A's (e4m3 x e5m2)");
      sub.add_option("--out", o->out, "output: fp32 or fp16")->capture_default_str();
      sub.add_option("--a", o->a, "A rows: float32 bit patterns in hex, K per case");
      sub.add_option("--b", o->b, "B columns: float32 bit patterns in hex, K per case");
      sub.add_option("--c", o->c, "C: one float32 bit pattern in binary per line (default: zero)");
      sub.add_option("--k", o->k, "K per case (default: from the count of C values)");
      sub.add_option("--d", o->d, "where D goes, one float32 bit pattern in binary per line")->capture_default_str();
      sub.add_option("--check", *check, "folder of measurements for one GPU (subfolders per input type; the instruction "
                     "that computed each D file from instruction.txt there, else as the published data's README says)");
      sub.add_option("--show", *show, "with --check: mismatches listed per file")->capture_default_str();
      auto preset = std::make_shared<bool>(false);
      sub.add_flag("--preset", *preset,
                   "with --check: --model is the one preset for every file, whatever instruction the files name "
                   "(to compare one instruction's model with another's data)");
      return [o, check, show, preset]() -> int {
        if (!check->empty()) return run_check(*check, o->model, *preset, *show);
        if (o->type.empty() || o->a.empty() || o->b.empty()) throw UsageError("mma needs --type, --a and --b (or --check DIR)");
        return run_model(*o);
      };
    },
});

}  // namespace
}  // namespace fmtcheck::cli
