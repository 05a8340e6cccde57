// Work spread over threads, shared by the readers and the batch paths.
#pragma once

#include <cstdint>
#include <functional>

namespace fmtcheck::detail {

// Runs work(0 .. count-1) on `threads` threads (0: every core), each item
// once; the first exception stops the others and is rethrown.
void run_parallel(std::uint64_t count, unsigned threads, const std::function<void(std::uint64_t)>& work);

// How many threads `work` units repay when a thread should take on at least
// `per_thread` of them (its start, tens of microseconds, then costs a few
// per cent): 1 up to one per hardware thread.
unsigned threads_for(std::uint64_t work, std::uint64_t per_thread);

}  // namespace fmtcheck::detail
