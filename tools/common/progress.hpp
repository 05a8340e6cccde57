// Progress of long work on a terminal; silent when stderr is piped or a file.
#pragma once

#include <cstdint>
#include <string>

namespace fmtcheck::cli {

class Progress {
 public:
  Progress(std::string label, std::uint64_t total);
  ~Progress();
  void update(std::uint64_t done);

 private:
  std::string label_;
  std::uint64_t total_;
  bool enabled_;
  int last_percent_ = -1;
};

}  // namespace fmtcheck::cli
