// Memory for the large arrays the package returns (convert's codes, decode's
// values). Memory new from the kernel costs a page fault and a page cleared at
// its first write: for a 32 MiB result that adds 30-50% to a conversion's time
// (malloc maps blocks of 32 MiB and more anew on every call; smaller ones it
// reuses only after its threshold has adapted). So a large result is mapped
// here on a 2 MiB boundary, marked MADV_HUGEPAGE (where transparent huge pages
// are enabled, one fault then serves 2 MiB), and when its array is freed the
// mapping is kept, up to `kept_at_most` bytes in all, for the next result of
// the same size: a loop that converts tensors of one shape writes into memory
// already faulted in. Small arrays, and systems without madvise, are numpy's
// own (`mapped_from` is None there).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <mutex>
#include <new>

#include "bindings.hpp"

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace fmtcheck::python {
namespace {

namespace nb = nanobind;

using Bytes = nb::ndarray<nb::numpy, std::uint8_t, nb::ndim<1>>;

#if defined(MADV_HUGEPAGE)
constexpr std::size_t huge_page = std::size_t{2} << 20;
// Below this the faults cost little beside a call (the Python front uses numpy's memory then).
constexpr std::size_t mapped_from = std::size_t{4} << 20;
// Freed mappings kept for reuse, the oldest unmapped first beyond this.
constexpr std::size_t kept_at_most = std::size_t{256} << 20;

struct Mapping {
  void* start;
  std::size_t length;
};

// The freed mappings, most recently freed last. Arrays are freed wherever
// Python drops them, so every access holds the lock. Never destroyed: arrays
// may outlive the extension's static objects at exit.
struct Kept {
  std::mutex lock;
  std::deque<Mapping> mappings;
  std::size_t bytes = 0;
};
Kept& kept() {
  static Kept* k = new Kept;
  return *k;
}

Mapping new_mapping(std::size_t length) {
  // Map one huge page more than needed, then give back the ends outside the aligned part.
  void* p = mmap(nullptr, length + huge_page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  const auto first = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t start = (first + huge_page - 1) / huge_page * huge_page;
  if (start > first) munmap(p, start - first);
  if (first + huge_page > start) munmap(reinterpret_cast<void*>(start + length), first + huge_page - start);
  // Without huge pages (THP "never") the advice fails and the memory is ordinary pages.
  madvise(reinterpret_cast<void*>(start), length, MADV_HUGEPAGE);
  return {reinterpret_cast<void*>(start), length};
}

Mapping take_mapping(std::size_t length) {
  Kept& k = kept();
  {
    const std::lock_guard<std::mutex> held(k.lock);
    for (auto it = k.mappings.rbegin(); it != k.mappings.rend(); ++it) {
      if (it->length == length) {
        const Mapping m = *it;
        k.mappings.erase(std::next(it).base());
        k.bytes -= length;
        return m;
      }
    }
  }
  return new_mapping(length);
}

void give_back(const Mapping& m) noexcept {
  Kept& k = kept();
  const std::lock_guard<std::mutex> held(k.lock);
  k.mappings.push_back(m);
  k.bytes += m.length;
  while (k.bytes > kept_at_most) {
    munmap(k.mappings.front().start, k.mappings.front().length);
    k.bytes -= k.mappings.front().length;
    k.mappings.pop_front();
  }
}

Bytes empty_bytes(std::size_t n) {
  const std::size_t length = std::max<std::size_t>(1, (n + huge_page - 1) / huge_page) * huge_page;
  auto* mapping = new Mapping(take_mapping(length));
  nb::capsule owner(mapping, [](void* m) noexcept {
    give_back(*static_cast<Mapping*>(m));
    delete static_cast<Mapping*>(m);
  });
  return Bytes(mapping->start, {n}, owner);
}
#endif

}  // namespace

void bind_fresh_memory(nb::module_& m) {
#if defined(MADV_HUGEPAGE)
  m.attr("mapped_from") = mapped_from;
  m.def("empty_bytes", &empty_bytes, nb::arg("size"),
        "An uninitialized numpy uint8 array of `size` bytes. A large one is mapped in huge pages where the\n"
        "system has them and, once freed, kept (up to 256 MiB in all) for the next array of its size,\n"
        "so that writing a result is as fast as writing into memory already in use.");
#else
  m.attr("mapped_from") = nb::none();
#endif
}

}  // namespace fmtcheck::python
