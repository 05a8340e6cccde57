#include "output_file.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

#include "command.hpp"

namespace fmtcheck::cli {

OutputFile::OutputFile(std::string path) : path_(std::move(path)) {
  if (is_stdout()) {
    stream_ = stdout;
    return;
  }
  const std::filesystem::path target(path_);
  const std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : ".";
  std::string pattern = (dir / ("." + target.filename().string() + ".tmp.XXXXXX")).string();
  const int fd = mkstemp(pattern.data());
  if (fd < 0) throw UsageError("cannot write '" + path_ + "': " + std::strerror(errno));
  temp_path_ = pattern;
  // mkstemp creates 0600; give the file the permissions a plain fopen would.
  const mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, 0666 & ~mask);
  stream_ = fdopen(fd, "wb");
  if (!stream_) {
    ::close(fd);
    std::remove(temp_path_.c_str());
    throw UsageError("cannot write '" + path_ + "': " + std::strerror(errno));
  }
}

OutputFile::~OutputFile() {
  if (is_stdout() || committed_) return;
  if (stream_) std::fclose(stream_);
  std::remove(temp_path_.c_str());
}

void OutputFile::write(const void* data, std::size_t bytes) {
  if (bytes != 0 && std::fwrite(data, 1, bytes, stream_) != bytes) {
    throw UsageError("cannot write '" + path_ + "': " + std::strerror(errno));
  }
}

void OutputFile::commit() {
  if (is_stdout()) {
    std::fflush(stdout);
    committed_ = true;
    return;
  }
  const bool ok = std::fflush(stream_) == 0 && std::fclose(stream_) == 0;
  stream_ = nullptr;
  if (!ok || std::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    std::remove(temp_path_.c_str());
    throw UsageError("cannot write '" + path_ + "': " + std::strerror(errno));
  }
  committed_ = true;
}

}  // namespace fmtcheck::cli
