// Reading tensors from .npy, safetensors, raw binary and CSV files without
// loading them whole: a file is opened once (its header validated) and each
// tensor is then delivered in chunks. Binary files are memory-mapped and the
// pages of a chunk are released once it has been consumed, so memory stays
// bounded by the chunk size times the threads, whatever the file size.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "fmtcheck/core/format.hpp"

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
  bool as_double = false;              // chunks carry double (a format float32 cannot hold), not float
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

// A run of consecutive values of one tensor. Formats float32 holds (every
// preset but fp64) widen to float32 exactly and arrive as float; float64 and
// wider user formats arrive as double, so that they are analysed exactly.
struct TensorChunk {
  std::uint64_t first = 0;  // index of the first value in the tensor
  std::variant<std::span<const float>, std::span<const double>> values;
  [[nodiscard]] std::size_t size() const {
    return std::visit([](auto v) { return v.size(); }, values);
  }
};

class TensorFile {
 public:
  virtual ~TensorFile() = default;
  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] const std::vector<TensorInfo>& tensors() const { return tensors_; }
  // Tensors present in the file but not floating point (safetensors I64 and the like).
  [[nodiscard]] const std::vector<std::string>& skipped() const { return skipped_; }
  // Calls `consume` once for each chunk of tensor `index`: chunk c holds
  // values [c * chunk_size, min((c + 1) * chunk_size, count)). With
  // threads > 1, binary files call it from that many threads at once, in no
  // particular order (consume must be thread-safe); CSV files always call it
  // in order from the calling thread. An exception thrown by consume or by
  // reading stops the work and is rethrown here.
  virtual void for_each_chunk(std::size_t index, std::size_t chunk_size,
                              const std::function<void(const TensorChunk&)>& consume, unsigned threads = 1) const = 0;

 protected:
  explicit TensorFile(std::string path) : path_(std::move(path)) {}
  std::string path_;
  std::vector<TensorInfo> tensors_;
  std::vector<std::string> skipped_;
};

// Chooses the reader by extension: .npy, .safetensors, .csv; anything else
// is raw binary and needs options.dtype. Throws TensorFileError.
std::unique_ptr<TensorFile> open_tensor_file(const std::string& path, const ReadOptions& options = {});

// Tensors already in memory (a numpy array, a framework tensor through
// DLPack): contiguous elements of `dtype` in the machine's byte order, read
// in place, never copied; native float32 and float64 chunks point into them.
// The memory must outlive the TensorFile. `label` stands for the path.
struct MemoryTensor {
  std::string name;
  Format dtype;
  std::vector<std::uint64_t> shape;
  const void* data = nullptr;
};
std::unique_ptr<TensorFile> memory_tensors(std::string label, const std::vector<MemoryTensor>& tensors);

// Format-specific openers (open_tensor_file dispatches to these).
std::unique_ptr<TensorFile> open_npy(const std::string& path, const ReadOptions& options);
std::unique_ptr<TensorFile> open_safetensors(const std::string& path, const ReadOptions& options);
std::unique_ptr<TensorFile> open_raw(const std::string& path, const ReadOptions& options);
std::unique_ptr<TensorFile> open_csv(const std::string& path, const ReadOptions& options);

}  // namespace fmtcheck
