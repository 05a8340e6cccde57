// Shared by the .npy, safetensors and raw readers: once a header has been
// parsed, every tensor is a run of fixed-width elements at a byte offset.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fmtcheck/io/tensor_io.hpp"

namespace fmtcheck::detail {

// Throws TensorFileError "PATH: PROBLEM".
[[noreturn]] void fail(const std::string& path, const std::string& problem);

class BinaryTensorFile final : public TensorFile {
 public:
  // Opens and memory-maps the file read-only (TensorFileError when missing
  // or unreadable).
  explicit BinaryTensorFile(const std::string& path);
  // Tensors already in memory, each added with add_memory_tensor; `label`
  // stands for the path in messages and results.
  struct InMemory {};
  BinaryTensorFile(std::string label, InMemory) : TensorFile(std::move(label)) {}
  ~BinaryTensorFile() override;
  BinaryTensorFile(const BinaryTensorFile&) = delete;
  BinaryTensorFile& operator=(const BinaryTensorFile&) = delete;

  [[nodiscard]] std::uint64_t size() const { return size_; }
  // Copies exactly `bytes` at `offset`, or fails with "truncated".
  void read_at(std::uint64_t offset, void* out, std::size_t bytes) const;
  // Declares a tensor stored at `offset`; checks it lies inside the file.
  void add_tensor(TensorInfo info, std::uint64_t offset, bool big_endian);
  // Declares a tensor whose elements lie at `data`, in the machine's order.
  void add_memory_tensor(TensorInfo info, const void* data);
  void mark_skipped(std::string name) { skipped_.push_back(std::move(name)); }

  void for_each_chunk(std::size_t index, std::size_t chunk_size,
                      const std::function<void(const TensorChunk&)>& consume, unsigned threads) const override;

 private:
  struct Location {
    const unsigned char* data;
    bool big_endian;
  };
  // Tells the kernel the mapped pages of [data, data + bytes) may be dropped
  // (nothing for tensors in memory).
  void release(const unsigned char* data, std::uint64_t bytes) const;

  const unsigned char* map_ = nullptr;
  std::uint64_t size_ = 0;
  std::vector<Location> locations_;
};

// Bytes per element of a storage format (1, 2, 4 or 8).
std::size_t element_bytes(const Format& f);

// The number of elements of `shape` (a header's or --shape's); fails naming
// `path` when it does not fit in 64 bits, so that a lying shape whose
// product wraps around cannot pass for a small tensor.
std::uint64_t element_count(const std::string& path, const std::vector<std::uint64_t>& shape);

// A decimal unsigned integer, all of `text`; nullopt when it is not one or does not fit in 64 bits.
std::optional<std::uint64_t> parse_uint64(std::string_view text);

}  // namespace fmtcheck::detail
