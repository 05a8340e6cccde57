#include "common/float32_sweep.hpp"

#include <bit>
#include <cstring>
#include <thread>
#include <vector>

#include "fmtcheck/batch/float32_sweep.hpp"
#include "common/usage_error.hpp"

#if defined(FMTCHECK_HAS_CUDA)
#include "fmtcheck/cuda/emulated_convert.hpp"
#endif

namespace fmtcheck::cli {
namespace {

static_assert(std::endian::native == std::endian::little, "sweep files are little-endian; this host is not");

// One thread's buffers, kept for the whole sweep: allocated per chunk, they
// would make the kernel wait on page faults (most of a sweep's time would
// go to the system).
struct Scratch {
  std::vector<float> in;
  std::vector<std::uint64_t> results;  // wide enough for any container
};

template <typename Out>
void convert_range(std::uint64_t first, std::size_t count, const Format& to, const Policy& p, std::uint64_t seed,
                   Scratch& scratch, std::uint8_t* out) {
  scratch.results.resize(count);
  const std::span<Out> results(reinterpret_cast<Out*>(scratch.results.data()), count);
  convert_float32_patterns(first, to, p, seed, results, scratch.in);
  std::memcpy(out, results.data(), count * sizeof(Out));
}

void convert_range_any(std::uint64_t first, std::size_t count, const Format& to, const Policy& p, std::uint64_t seed,
                       Scratch& scratch, std::uint8_t* out) {
  switch (to.storage_bits) {
    case 8: return convert_range<std::uint8_t>(first, count, to, p, seed, scratch, out);
    case 16: return convert_range<std::uint16_t>(first, count, to, p, seed, scratch, out);
    case 32: return convert_range<std::uint32_t>(first, count, to, p, seed, scratch, out);
    default: return convert_range<std::uint64_t>(first, count, to, p, seed, scratch, out);
  }
}

#if defined(FMTCHECK_HAS_CUDA)
// A target the GPU does not take (fp64), in the words of --device.
void check_gpu_target(const Format& to) {
  try {
    cuda::check_gpu_target(to);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--device cuda: ") + e.what());
  }
}
#endif

// The GPU converts each chunk (its patterns generated there) while this
// thread waits: PCIe and the consumer's disk bound a sweep, not the GPU.
void sweep_on_gpu(const Format& to, const Policy& p, std::uint64_t seed, std::size_t width,
                  const std::function<void(std::uint64_t first, std::span<const std::uint8_t> bytes)>& consume) {
#if defined(FMTCHECK_HAS_CUDA)
  check_gpu_target(to);
  std::vector<std::uint8_t> chunk(kSweepChunk * width);
  for (std::uint64_t first = 0; first < kFloat32Count; first += kSweepChunk) {
    cuda::convert_float32_patterns(first, kSweepChunk, to, p, seed, chunk.data());
    consume(first, chunk);
  }
#else
  (void)to, (void)p, (void)seed, (void)width, (void)consume;
  throw UsageError("--device cuda: this fmtcheck was built without CUDA");
#endif
}

}  // namespace

void sweep_float32(const Format& to, const Policy& p, std::uint64_t seed, Device device,
                   const std::function<void(std::uint64_t first, std::span<const std::uint8_t> bytes)>& consume) {
  const std::size_t width = static_cast<std::size_t>(to.storage_bits) / 8;
  if (device == Device::cuda) return sweep_on_gpu(to, p, seed, width, consume);
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  // Two chunks: the threads convert one while this thread hands the other to
  // consume, so writing a 4-8 GiB sweep overlaps converting it.
  std::vector<std::uint8_t> chunks[2] = {std::vector<std::uint8_t>(kSweepChunk * width),
                                         std::vector<std::uint8_t>(kSweepChunk * width)};
  std::vector<Scratch> scratch(threads);
  for (std::uint64_t first = 0; first <= kFloat32Count; first += kSweepChunk) {
    std::vector<std::thread> pool;
    if (first < kFloat32Count) {
      std::uint8_t* chunk = chunks[(first / kSweepChunk) % 2].data();
      for (unsigned t = 0; t < threads; ++t) {
        const std::uint64_t begin = kSweepChunk * t / threads;
        const std::uint64_t end = kSweepChunk * (t + 1) / threads;
        pool.emplace_back([&, t, begin, end, chunk] {
          convert_range_any(first + begin, end - begin, to, p, seed, scratch[t], chunk + begin * width);
        });
      }
    }
    const auto join = [&] {
      for (auto& th : pool) th.join();
    };
    try {
      if (first > 0) consume(first - kSweepChunk, chunks[(first / kSweepChunk + 1) % 2]);
    } catch (...) {
      join();  // a write error: the threads must end before the buffers go
      throw;
    }
    join();
  }
}

Float32Sweep digest_float32(const Format& to, const Policy& p, std::uint64_t seed, Device device) {
#if defined(FMTCHECK_HAS_CUDA)
  if (device == Device::cuda) {
    check_gpu_target(to);
    return cuda::sweep_every_float32_on_gpu(to, p, seed);
  }
#endif
  (void)device;  // parse_device_option refuses cuda where this build has none
  return sweep_every_float32(to, p, seed);
}

}  // namespace fmtcheck::cli
