// What the fuzz targets share: the readers take paths, so each input is
// written to a file of this process's own (removed again afterwards), and
// every tensor a reader accepts is read to its end, so that a header that
// lies about the data is caught where the data is touched.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <unistd.h>

#include "fmtcheck/io/tensor_io.hpp"

namespace fmtcheck::fuzz {

// A folder of this process's own under the temporary folder, made on first
// use and removed at exit.
inline std::filesystem::path scratch() {
  // Never destroyed, so that the exit handler can still read it.
  static const std::filesystem::path* const dir = [] {
    auto* p = new std::filesystem::path(std::filesystem::temp_directory_path() / ("fmtcheck-fuzz-" + std::to_string(::getpid())));
    std::filesystem::create_directories(*p);
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(*dir, ec);
    });
    return p;
  }();
  return *dir;
}

inline void write_file(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// The input as a file named `name` in the scratch folder, removed when it goes out of scope.
class InputFile {
 public:
  InputFile(const std::string& name, std::string_view bytes) : path_(scratch() / name) { write_file(path_, bytes); }
  ~InputFile() {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  [[nodiscard]] std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

inline std::string_view text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Reads every value of every tensor, in small chunks so that chunk
// boundaries fall inside small tensors too; the values delivered must be
// as many as the tensor's count, and its shape's product that count.
inline void read_everything(const TensorFile& file) {
  for (std::size_t i = 0; i < file.tensors().size(); ++i) {
    // The shape must multiply out to the count (in 128 bits, so that a
    // product past 2^64 cannot wrap around onto it).
    const TensorInfo& info = file.tensors()[i];
    bool empty = false, beyond = false;
    unsigned __int128 product = 1;
    for (const std::uint64_t d : info.shape) {
      empty = empty || d == 0;
      if (!beyond) product *= d;
      beyond = beyond || (product >> 64) != 0;
    }
    if (empty ? info.count != 0 : beyond || product != info.count) __builtin_trap();  // the shape lies about the tensor
    std::uint64_t seen = 0;
    file.for_each_chunk(i, 7, [&](const TensorChunk& chunk) { seen += chunk.size(); });
    if (seen != file.tensors()[i].count) __builtin_trap();  // the reader delivered other than it announced
  }
}

// A tensor-file reader on the input, written to a file named `name`: a file
// it accepts is read to its end; a bad one must give TensorFileError.
template <typename Open>
void read_tensor_file(const std::string& name, const std::uint8_t* data, std::size_t size, Open open) {
  const InputFile file(name, text(data, size));
  try {
    read_everything(*open(file.path()));
  } catch (const TensorFileError&) {
  }
}

}  // namespace fmtcheck::fuzz
