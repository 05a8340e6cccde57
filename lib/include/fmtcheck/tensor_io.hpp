// Reading tensors from .npy, safetensors, raw binary and CSV files without
// loading them whole: a file is opened once (its header validated) and each
// tensor is then streamed in chunks of float32 values, so memory stays
// bounded by the chunk size whatever the file size.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "fmtcheck/format.hpp"

namespace fmtcheck {

// A file that cannot be read as tensors; the message names the file and the problem.
struct TensorFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct TensorInfo {
  std::string name;                    // safetensors key, .npy/raw file stem, CSV column name
  Format dtype;                        // how the elements are stored (fp32, bf16, e4m3, ...)
  std::vector<std::uint64_t> shape;
  std::uint64_t count = 0;             // number of elements
};

// What a file cannot say about itself.
struct ReadOptions {
  // Raw files (required) and .npy files whose dtype numpy wrote as void:
  // ml_dtypes' bfloat16 is saved as '<V2' (read as bf16 unless told) and
  // its one-byte types other than float8_e5m2 as '<V1' (no default).
  std::optional<Format> dtype;
  std::optional<std::vector<std::uint64_t>> shape;  // raw files: must match the file size
  std::string column;  // CSV: header name or 0-based index; empty = the first column
};

// Values are delivered as float32. Every format up to 32 bits widens to
// float32 exactly; float64 elements are rounded to nearest float32, as a
// GPU kernel loading them into fp32 registers would.
class TensorFile {
 public:
  virtual ~TensorFile() = default;
  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] const std::vector<TensorInfo>& tensors() const { return tensors_; }
  // Tensors present in the file but not floating point (safetensors I64 and the like).
  [[nodiscard]] const std::vector<std::string>& skipped() const { return skipped_; }
  // Calls `consume` with consecutive chunks of tensor `index`, each at most
  // `chunk_size` values, in storage order.
  virtual void for_each_chunk(std::size_t index, std::size_t chunk_size,
                              const std::function<void(std::span<const float>)>& consume) const = 0;

 protected:
  explicit TensorFile(std::string path) : path_(std::move(path)) {}
  std::string path_;
  std::vector<TensorInfo> tensors_;
  std::vector<std::string> skipped_;
};

// Chooses the reader by extension: .npy, .safetensors, .csv; anything else
// is raw binary and needs options.dtype. Throws TensorFileError.
std::unique_ptr<TensorFile> open_tensor_file(const std::string& path, const ReadOptions& options = {});

// Format-specific openers (open_tensor_file dispatches to these).
std::unique_ptr<TensorFile> open_npy(const std::string& path, const ReadOptions& options);
std::unique_ptr<TensorFile> open_safetensors(const std::string& path, const ReadOptions& options);
std::unique_ptr<TensorFile> open_raw(const std::string& path, const ReadOptions& options);
std::unique_ptr<TensorFile> open_csv(const std::string& path, const ReadOptions& options);

}  // namespace fmtcheck
