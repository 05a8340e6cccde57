// Fixed-width elements from a memory-mapped file, widened to float32 when
// float32 holds the format (decode_batch), to double otherwise. The mapping is private and read-only, read sequentially
// (MADV_SEQUENTIAL), and each chunk's pages are released after use, so a
// file of any size needs only the chunks in flight.
#include <algorithm>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <stdexcept>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "batch/decode_fast.hpp"
#include "core/parallel.hpp"
#include "fmtcheck/batch/decode_batch.hpp"
#include "fmtcheck/core/decode.hpp"
#include "io/binary_tensor_file.hpp"

namespace fmtcheck {
namespace detail {

void fail(const std::string& path, const std::string& problem) { throw TensorFileError(path + ": " + problem); }

std::size_t element_bytes(const Format& f) { return static_cast<std::size_t>(f.storage_bits) / 8; }

std::uint64_t element_count(const std::string& path, const std::vector<std::uint64_t>& shape) {
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return 0;
  std::uint64_t count = 1;
  for (const std::uint64_t d : shape) {
    if (__builtin_mul_overflow(count, d, &count)) {
      std::string text;
      for (const std::uint64_t e : shape) text += (text.empty() ? "" : ", ") + std::to_string(e);
      fail(path, "shape (" + text + ") has more than 2^64 elements");
    }
  }
  return count;
}

std::optional<std::uint64_t> parse_uint64(std::string_view text) {
  std::uint64_t v = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

BinaryTensorFile::BinaryTensorFile(const std::string& path) : TensorFile(path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(path, std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    fail(path, "not a regular file");
  }
  size_ = static_cast<std::uint64_t>(st.st_size);
  if (size_ > 0) {
    void* map = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    const int error = errno;
    ::close(fd);  // the mapping keeps the file open
    if (map == MAP_FAILED) fail(path, std::string("cannot map the file: ") + std::strerror(error));
    map_ = static_cast<const unsigned char*>(map);
    ::madvise(const_cast<unsigned char*>(map_), size_, MADV_SEQUENTIAL);
  } else {
    ::close(fd);
  }
}

BinaryTensorFile::~BinaryTensorFile() {
  if (map_ != nullptr) ::munmap(const_cast<unsigned char*>(map_), size_);
}

void BinaryTensorFile::read_at(std::uint64_t offset, void* out, std::size_t bytes) const {
  if (offset > size_ || bytes > size_ - offset) fail(path_, "truncated: file ends at byte " + std::to_string(size_));
  if (bytes > 0) std::memcpy(out, map_ + offset, bytes);
}

void BinaryTensorFile::release(const unsigned char* data, std::uint64_t bytes) const {
  if (map_ == nullptr || data < map_ || data >= map_ + size_) return;
  const auto offset = static_cast<std::uint64_t>(data - map_);
  // A page fault maps up to 64 KiB around the faulting page (the kernel's
  // fault-around), so pages of neighbouring chunks get mapped too; dropping
  // that margin as well keeps them from piling up when a neighbour was
  // already released. A neighbour still in use merely faults them in again.
  constexpr std::uint64_t fault_around = 64 * 1024;
  static const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  const std::uint64_t begin = (offset > fault_around ? offset - fault_around : 0) / page * page;
  const std::uint64_t end = std::min(size_, offset + bytes + fault_around);
  if (end > begin) ::madvise(const_cast<unsigned char*>(map_) + begin, end - begin, MADV_DONTNEED);
}

namespace {

// Runs `f` with an empty span of the container type of a format of at most 32 bits.
template <typename F>
void with_container(const Format& f, F&& run) {
  switch (f.storage_bits) {
    case 8: return run(std::uint8_t{});
    case 16: return run(std::uint16_t{});
    default: return run(std::uint32_t{});
  }
}

}  // namespace

void BinaryTensorFile::add_tensor(TensorInfo info, std::uint64_t offset, bool big_endian) {
  const std::uint64_t bytes = info.count * element_bytes(info.dtype);
  if (info.count != 0 && bytes / info.count != element_bytes(info.dtype)) fail(path_, "tensor '" + info.name + "' is too large");
  if (offset > size_ || bytes > size_ - offset) {
    fail(path_, "truncated: tensor '" + info.name + "' needs " + std::to_string(bytes) + " bytes at offset " +
                    std::to_string(offset) + " but the file has " + std::to_string(size_));
  }
  // Elements are delivered as float where float32 holds every value of the
  // dtype (decode_batch's contract), else as double.
  info.as_double = !float32_holds(info.dtype);
  tensors_.push_back(std::move(info));
  locations_.push_back({map_ + offset, big_endian});
}

void BinaryTensorFile::add_memory_tensor(TensorInfo info, const void* data) {
  info.as_double = !float32_holds(info.dtype);
  tensors_.push_back(std::move(info));
  locations_.push_back({static_cast<const unsigned char*>(data), std::endian::native == std::endian::big});
}

namespace {

std::uint64_t load(const unsigned char* p, std::size_t bytes, bool big_endian) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < bytes; ++i) {
    const std::size_t byte = big_endian ? bytes - 1 - i : i;
    v |= std::uint64_t{p[i]} << (8 * byte);
  }
  return v;
}

// Values [first, first + n) stored at `bytes`: a chunk that points into the
// mapping where they are already native float32 or float64, and into
// `buffer` otherwise (float when float32 holds the format, else double).
TensorChunk decode(const unsigned char* bytes, const Format& dtype, bool big_endian, std::uint64_t first, std::size_t n,
                   bool as_float, std::vector<unsigned char>& buffer) {
  const std::size_t width = element_bytes(dtype);
  const bool little = !big_endian || width == 1;
  const auto aligned = [&](std::size_t a) { return reinterpret_cast<std::uintptr_t>(bytes) % a == 0; };
  // Native little-endian float32/float64 need no decoding at all.
  if (little && dtype == formats::fp32 && aligned(alignof(float))) {
    return {first, std::span(reinterpret_cast<const float*>(bytes), n)};
  }
  if (little && dtype == formats::fp64 && aligned(alignof(double))) {
    return {first, std::span(reinterpret_cast<const double*>(bytes), n)};
  }
  if (!as_float) {
    buffer.resize(n * sizeof(double));
    auto* out = reinterpret_cast<double*>(buffer.data());
    for (std::size_t i = 0; i < n; ++i) out[i] = to_double(dtype, load(bytes + i * width, width, big_endian));
    return {first, std::span<const double>(out, n)};
  }
  // Codes in native order (copied when swapped or misaligned), then the library's batch decode.
  buffer.resize(n * (sizeof(float) + width));
  auto* out = reinterpret_cast<float*>(buffer.data());
  with_container(dtype, [&](auto code) {
    using Code = decltype(code);
    const Code* codes = reinterpret_cast<const Code*>(bytes);
    if (!little || !aligned(alignof(Code))) {
      auto* copy = reinterpret_cast<Code*>(buffer.data() + n * sizeof(float));
      for (std::size_t i = 0; i < n; ++i) copy[i] = static_cast<Code>(load(bytes + i * width, width, big_endian));
      codes = copy;
    }
    decode_batch(std::span<const Code>(codes, n), dtype, std::span<float>(out, n));
  });
  return {first, std::span<const float>(out, n)};
}

}  // namespace

void BinaryTensorFile::for_each_chunk(std::size_t index, std::size_t chunk_size,
                                      const std::function<void(const TensorChunk&)>& consume, unsigned threads) const {
  const TensorInfo& info = tensors_.at(index);
  const Location& where = locations_.at(index);
  const std::size_t width = element_bytes(info.dtype);
  const bool as_float = !info.as_double;
  const std::uint64_t chunks = (info.count + chunk_size - 1) / chunk_size;
  run_parallel(chunks, threads, [&](std::uint64_t c) {
    thread_local std::vector<unsigned char> buffer;
    const std::uint64_t first = c * chunk_size;
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk_size, info.count - first));
    consume(decode(where.data + first * width, info.dtype, where.big_endian, first, n, as_float, buffer));
    release(where.data + first * width, n * width);
  });
}

}  // namespace detail

std::unique_ptr<TensorFile> open_tensor_file(const std::string& path, const ReadOptions& options) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) detail::fail(path, "no such file");
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext == ".npy") return open_npy(path, options);
  if (ext == ".safetensors") return open_safetensors(path, options);
  if (ext == ".csv") return open_csv(path, options);
  return open_raw(path, options);
}

}  // namespace fmtcheck
