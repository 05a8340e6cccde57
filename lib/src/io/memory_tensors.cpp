// Tensors in memory: the binary reader's chunking and decoding, over the
// caller's memory instead of a mapped file.
#include <functional>
#include <numeric>

#include "io/binary_tensor_file.hpp"

namespace fmtcheck {

std::unique_ptr<TensorFile> memory_tensors(std::string label, const std::vector<MemoryTensor>& tensors) {
  auto file = std::make_unique<detail::BinaryTensorFile>(std::move(label), detail::BinaryTensorFile::InMemory{});
  for (const MemoryTensor& t : tensors) {
    TensorInfo info{t.name, t.dtype, t.shape,
                    std::accumulate(t.shape.begin(), t.shape.end(), std::uint64_t{1}, std::multiplies<>()), false};
    file->add_memory_tensor(std::move(info), t.data);
  }
  return file;
}

}  // namespace fmtcheck
