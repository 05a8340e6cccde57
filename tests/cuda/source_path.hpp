// Files of the source tree for the device programs, wherever the tree is:
// $FMTCHECK_SOURCE_DIR (run-hardware-comparison.sh sets it), else the tree
// they were built from, else the working directory (a device machine runs
// them from a copy of the tree's root).
#pragma once

#include <cstdlib>
#include <filesystem>

inline std::filesystem::path source_path(const std::filesystem::path& relative) {
  if (const char* dir = std::getenv("FMTCHECK_SOURCE_DIR"); dir != nullptr && *dir != '\0') return dir / relative;
  const std::filesystem::path built = std::filesystem::path(FMTCHECK_SOURCE_DIR) / relative;
  return std::filesystem::exists(built) ? built : relative;
}
