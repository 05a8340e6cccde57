#include "common/progress.hpp"

#include <cstdio>
#include <unistd.h>

namespace fmtcheck::cli {

Progress::Progress(std::string label, std::uint64_t total)
    : label_(std::move(label)), total_(total), enabled_(isatty(STDERR_FILENO) != 0) {}

Progress::~Progress() {
  if (enabled_ && last_percent_ >= 0) std::fprintf(stderr, "\r%*s\r", static_cast<int>(label_.size()) + 8, "");
}

void Progress::update(std::uint64_t done) {
  if (!enabled_ || total_ == 0) return;
  const int percent = static_cast<int>(done * 100 / total_);
  if (percent == last_percent_) return;
  last_percent_ = percent;
  std::fprintf(stderr, "\r%s: %3d%%", label_.c_str(), percent);
  std::fflush(stderr);
}

}  // namespace fmtcheck::cli
