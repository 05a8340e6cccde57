#include "common/progress.hpp"

#include <algorithm>
#include <cstdio>
#include <unistd.h>

namespace fmtcheck::cli {

std::string human_bytes(double bytes) {
  const char* units[] = {"B", "kB", "MB", "GB", "TB"};
  int u = 0;
  while (bytes >= 1000 && u < 4) {
    bytes /= 1000;
    ++u;
  }
  char text[32];
  std::snprintf(text, sizeof text, u == 0 ? "%.0f %s" : "%.3g %s", bytes, units[u]);
  return text;
}

Progress::Progress(std::string label, std::uint64_t total, double bytes_per_unit)
    : label_(std::move(label)), total_(total), bytes_per_unit_(bytes_per_unit), enabled_(isatty(STDERR_FILENO) != 0) {}

Progress::~Progress() {
  if (enabled_ && drawn_width_ > 0) std::fprintf(stderr, "\r%*s\r", static_cast<int>(drawn_width_), "");
}

void Progress::update(std::uint64_t done) {
  if (!enabled_ || total_ == 0) return;
  const Clock::time_point now = Clock::now();
  if (now - last_draw_ < std::chrono::milliseconds(200) && done < total_) return;
  last_draw_ = now;
  const double seconds = std::chrono::duration<double>(now - start_).count();
  const double rate = seconds > 0 ? static_cast<double>(done) / seconds : 0;  // units per second
  std::string line = label_ + (note_.empty() ? "" : " " + note_) + ": ";
  char text[64];
  std::snprintf(text, sizeof text, "%3d%%", static_cast<int>(done * 100 / total_));
  line += text;
  if (bytes_per_unit_ > 0) {
    line += ", " + human_bytes(static_cast<double>(done) * bytes_per_unit_) + " of " +
            human_bytes(static_cast<double>(total_) * bytes_per_unit_);
    if (rate > 0) line += ", " + human_bytes(rate * bytes_per_unit_) + "/s";
  }
  if (rate > 0 && done < total_) {
    std::snprintf(text, sizeof text, ", %.0f s left", static_cast<double>(total_ - done) / rate);
    line += text;
  }
  const std::size_t width = line.size();
  if (width < drawn_width_) line.append(drawn_width_ - width, ' ');
  drawn_width_ = std::max(drawn_width_, width);
  std::fprintf(stderr, "\r%s", line.c_str());
  std::fflush(stderr);
}

}  // namespace fmtcheck::cli
