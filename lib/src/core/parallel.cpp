#include "core/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace fmtcheck::detail {

void run_parallel(std::uint64_t count, unsigned threads, const std::function<void(std::uint64_t)>& work) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::clamp<std::uint64_t>(threads, 1, std::max<std::uint64_t>(count, 1)));
  if (threads == 1) {
    for (std::uint64_t i = 0; i < count; ++i) work(i);
    return;
  }
  std::atomic<std::uint64_t> next{0};
  std::atomic<bool> stop{false};
  std::exception_ptr error;
  std::mutex error_mutex;
  const auto worker = [&] {
    for (std::uint64_t i; !stop && (i = next++) < count;) {
      try {
        work(i);
      } catch (...) {
        const std::lock_guard lock(error_mutex);
        if (!error) error = std::current_exception();
        stop = true;
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

unsigned threads_for(std::uint64_t work, std::uint64_t per_thread) {
  const std::uint64_t cores = std::max(1u, std::thread::hardware_concurrency());
  return static_cast<unsigned>(std::clamp<std::uint64_t>(work / std::max<std::uint64_t>(per_thread, 1), 1, cores));
}

}  // namespace fmtcheck::detail
