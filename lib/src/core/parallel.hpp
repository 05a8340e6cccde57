// Work spread over threads, shared by the readers and the batch paths.
#pragma once

#include <cstdint>
#include <functional>

namespace fmtcheck::detail {

// Runs work(0 .. count-1) on `threads` threads (0: every core), each item
// once; the first exception stops the others and is rethrown.
void run_parallel(std::uint64_t count, unsigned threads, const std::function<void(std::uint64_t)>& work);

}  // namespace fmtcheck::detail
