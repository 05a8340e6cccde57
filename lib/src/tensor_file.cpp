// Streaming fixed-width elements from disk and widening them to float32.
// pread() into a small buffer keeps memory bounded for files of any size.
#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

#include "binary_tensor_file.hpp"
#include "fmtcheck/decode.hpp"

namespace fmtcheck {
namespace detail {

void fail(const std::string& path, const std::string& problem) { throw TensorFileError(path + ": " + problem); }

std::size_t element_bytes(const Format& f) { return static_cast<std::size_t>(f.storage_bits) / 8; }

BinaryTensorFile::BinaryTensorFile(const std::string& path) : TensorFile(path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) fail(path, std::strerror(errno));
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    fd_ = -1;
    fail(path, "not a regular file");
  }
  size_ = static_cast<std::uint64_t>(st.st_size);
}

BinaryTensorFile::~BinaryTensorFile() {
  if (fd_ >= 0) ::close(fd_);
}

void BinaryTensorFile::read_at(std::uint64_t offset, void* out, std::size_t bytes) const {
  auto* p = static_cast<char*>(out);
  while (bytes > 0) {
    const ssize_t n = ::pread(fd_, p, bytes, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(path_, std::strerror(errno));
    if (n == 0) fail(path_, "truncated: file ends at byte " + std::to_string(offset));
    p += n;
    offset += static_cast<std::uint64_t>(n);
    bytes -= static_cast<std::size_t>(n);
  }
}

void BinaryTensorFile::add_tensor(TensorInfo info, std::uint64_t offset, bool big_endian) {
  const std::uint64_t bytes = info.count * element_bytes(info.dtype);
  if (info.count != 0 && bytes / info.count != element_bytes(info.dtype)) fail(path_, "tensor '" + info.name + "' is too large");
  if (offset > size_ || bytes > size_ - offset) {
    fail(path_, "truncated: tensor '" + info.name + "' needs " + std::to_string(bytes) + " bytes at offset " +
                    std::to_string(offset) + " but the file has " + std::to_string(size_));
  }
  tensors_.push_back(std::move(info));
  locations_.push_back({offset, big_endian});
}

namespace {

// Widens container bits to float32. Formats of 16 bits or fewer use a
// table built from the library's exact decoder; float32 is a bit cast;
// float64 rounds to nearest (the one lossy case, see tensor_io.hpp).
class ElementDecoder {
 public:
  explicit ElementDecoder(const Format& f) : format_(f) {
    if (f.storage_bits <= 16) {
      table_.resize(std::size_t{1} << f.storage_bits);
      for (std::size_t bits = 0; bits < table_.size(); ++bits) {
        table_[bits] = static_cast<float>(to_double(f, bits));
      }
    }
  }
  float operator()(std::uint64_t bits) const {
    if (!table_.empty()) return table_[bits];
    if (format_ == formats::fp32) return std::bit_cast<float>(static_cast<std::uint32_t>(bits));
    return static_cast<float>(to_double(format_, bits));
  }

 private:
  Format format_;
  std::vector<float> table_;
};

std::uint64_t load(const unsigned char* p, std::size_t bytes, bool big_endian) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < bytes; ++i) {
    const std::size_t byte = big_endian ? bytes - 1 - i : i;
    v |= std::uint64_t{p[i]} << (8 * byte);
  }
  return v;
}

}  // namespace

void BinaryTensorFile::for_each_chunk(std::size_t index, std::size_t chunk_size,
                                      const std::function<void(std::span<const float>)>& consume) const {
  const TensorInfo& info = tensors_.at(index);
  const Location& where = locations_.at(index);
  const std::size_t width = element_bytes(info.dtype);
  const ElementDecoder decode(info.dtype);
  std::vector<unsigned char> raw(chunk_size * width);
  std::vector<float> values(chunk_size);
  for (std::uint64_t done = 0; done < info.count;) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk_size, info.count - done));
    read_at(where.offset + done * width, raw.data(), n * width);
    for (std::size_t i = 0; i < n; ++i) values[i] = decode(load(raw.data() + i * width, width, where.big_endian));
    consume(std::span<const float>(values.data(), n));
    done += n;
  }
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
