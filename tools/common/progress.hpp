// Progress of long work on a terminal; silent when stderr is piped or a file.
// One line, redrawn at most five times a second: the percentage, what is
// done (bytes when the work is counted in bytes), the rate and the time left.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace fmtcheck::cli {

class Progress {
 public:
  // With bytes_per_unit > 0 the work is counted in units of that many bytes
  // and the line shows bytes and bytes per second.
  Progress(std::string label, std::uint64_t total, double bytes_per_unit = 0);
  ~Progress();
  void update(std::uint64_t done);
  // A few words shown after the label ("file 2/4").
  void set_note(std::string note) { note_ = std::move(note); }

 private:
  using Clock = std::chrono::steady_clock;
  std::string label_, note_;
  std::uint64_t total_;
  double bytes_per_unit_;
  bool enabled_;
  Clock::time_point start_ = Clock::now(), last_draw_{};
  std::size_t drawn_width_ = 0;
};

// "1.23 GB", "512 MB", "12 kB", "7 B" (decimal units, as disks are sold).
std::string human_bytes(double bytes);

}  // namespace fmtcheck::cli
