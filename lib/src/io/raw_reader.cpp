// Raw little-endian binary: the user says what the elements are (--dtype,
// any fmtcheck format in its container) and optionally the shape.
#include <filesystem>

#include "io/binary_tensor_file.hpp"

namespace fmtcheck {

std::unique_ptr<TensorFile> open_raw(const std::string& path, const ReadOptions& options) {
  if (!options.dtype) {
    detail::fail(path, "unknown file type (expected .npy, .safetensors or .csv); pass --dtype to read it as raw binary");
  }
  auto file = std::make_unique<detail::BinaryTensorFile>(path);
  TensorInfo info;
  info.name = std::filesystem::path(path).stem().string();
  info.dtype = *options.dtype;
  const std::size_t width = detail::element_bytes(info.dtype);
  if (file->size() % width != 0) {
    detail::fail(path, "size " + std::to_string(file->size()) + " is not a multiple of the " + std::to_string(width) + "-byte " + info.dtype.name + " element");
  }
  info.count = file->size() / width;
  if (options.shape) {
    const std::uint64_t count = detail::element_count(path + ": --shape", *options.shape);
    if (count != info.count) {
      detail::fail(path, "shape and size disagree: --shape has " + std::to_string(count) + " elements, the file holds " +
                             std::to_string(info.count) + " " + info.dtype.name + " values");
    }
    info.shape = *options.shape;
  } else {
    info.shape = {info.count};
  }
  file->add_tensor(std::move(info), 0, false);
  return file;
}

}  // namespace fmtcheck
