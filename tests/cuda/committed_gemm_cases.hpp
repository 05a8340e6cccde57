// The cuBLASLt GEMMs measured on GPUs and committed (docs/hardware/<gpu>/cases/gemm/), for the tests
// that replay them: on the CPU's emulated GEMM (test_gemm_replay.cpp) and the GPU's
// (test_emulated_gemm.cpp).
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "fmtcheck/cuda/gemm_case_file.hpp"
#include "source_path.hpp"

// Every committed case file under `hardware_dir`, parsed, with its path.
inline std::vector<std::pair<std::filesystem::path, fmtcheck::cuda::GemmCases>> committed_gemm_cases(
    const std::filesystem::path& hardware_dir) {
  std::vector<std::pair<std::filesystem::path, fmtcheck::cuda::GemmCases>> out;
  for (const auto& gpu : std::filesystem::directory_iterator(hardware_dir)) {
    const std::filesystem::path dir = gpu.path() / "cases" / "gemm";
    if (!std::filesystem::is_directory(dir)) continue;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      std::ifstream in(entry.path());
      std::stringstream text;
      text << in.rdbuf();
      out.emplace_back(entry.path(), fmtcheck::cuda::parse_gemm_cases(text.str()));
    }
  }
  return out;
}
