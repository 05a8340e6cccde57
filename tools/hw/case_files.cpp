#ifdef FMTCHECK_HAS_CUDA
#include "hw/case_files.hpp"

#include <filesystem>
#include <fmt/format.h>

#include "common/usage_error.hpp"
#include "common/output_file.hpp"
#include "common/tensor_core_files.hpp"
#include "fmtcheck/core/convert.hpp"

namespace fmtcheck::cli {
namespace {

// A register word as the float32 the files hold: codes widened exactly (NaN
// stays NaN with its sign), tf32 registers unchanged.
std::uint32_t as_fp32(std::uint32_t word, const Format& f) {
  if (f.storage_bits == 32) return word;
  return static_cast<std::uint32_t>(convert_bits(word, f, formats::fp32).bits);
}

}  // namespace

void write_case_files(const std::string& dir, const std::string& tag, const cuda::MmaInstruction& ins,
                      const std::vector<MeasuredTiles>& batches, std::size_t per_batch, std::size_t differing) {
  const Format& in = *ins.input;
  const Format& out = *ins.output;
  const std::size_t m = static_cast<std::size_t>(ins.m()), k = static_cast<std::size_t>(ins.k());
  std::string a_text, b_text;
  std::vector<std::uint32_t> c, d;
  const auto add = [&](const MeasuredTiles& batch, std::size_t i) {
    const std::size_t t = i / (m * 8), row = i % (m * 8) / 8, col = i % 8;
    for (std::size_t j = 0; j < k; ++j) {
      a_text += fmt::format("{}{:08x}", j ? " " : "", as_fp32(batch.tiles.a[(t * m + row) * k + j], in));
      b_text += fmt::format("{}{:08x}", j ? " " : "", as_fp32(batch.tiles.b[(t * 8 + col) * k + j], in));
    }
    a_text += '\n';
    b_text += '\n';
    c.push_back(as_fp32(batch.tiles.c[i], out));
    d.push_back(as_fp32(batch.hardware[i], out));
  };
  std::size_t kept_differing = 0;
  for (const MeasuredTiles& batch : batches) {
    const std::size_t n = batch.hardware.size();
    for (std::size_t i = 0; i < n; ++i) {
      const bool differs = batch.hardware[i] != batch.emulator[i];
      if (i < per_batch) {
        add(batch, i);
      } else if (differs && kept_differing < differing) {
        add(batch, i);
        ++kept_differing;
      }
    }
  }
  const std::string type = in.name;
  const std::filesystem::path folder = std::filesystem::path(dir) / type;
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  if (ec) throw UsageError("--cases: cannot create '" + folder.string() + "': " + ec.message());
  const auto path = [&](const std::string& prefix, const std::string& what) {
    return (folder / fmt::format("{}_{}_{}.txt", prefix, tag, what)).string();
  };
  const std::string d_path = path("d", out.name);
  OutputFile a_file(path("a", type)), b_file(path("b", type)), c_file(path("c", "fp32")), d_file(d_path);
  // Which instruction computed D: mma.sync and wgmma differ on FP8, and
  // `mma --check` picks the model by it.
  OutputFile instruction_file((folder / instruction_file_name).string());
  a_file.write(a_text);
  b_file.write(b_text);
  write_binary_lines(c_file, c);
  write_binary_lines(d_file, d);
  write_instruction_file(instruction_file, std::filesystem::path(d_path).filename().string(), std::string(ins.ptx));
  a_file.commit();
  b_file.commit();
  c_file.commit();
  d_file.commit();
  instruction_file.commit();
}

}  // namespace fmtcheck::cli
#endif
