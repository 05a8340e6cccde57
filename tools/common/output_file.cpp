#include "common/output_file.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/usage_error.hpp"

namespace fmtcheck::cli {
namespace {

// Temporary files in flight, so that Ctrl-C or a kill during a 4 GiB sweep
// removes them too. A signal handler may not allocate or lock: the paths
// live in fixed storage and are claimed with a flag.
constexpr int kMaxTemporaries = 8;
char g_temporary[kMaxTemporaries][4096];
volatile std::sig_atomic_t g_in_use[kMaxTemporaries];

extern "C" void remove_temporaries_and_reraise(int sig) {
  for (int i = 0; i < kMaxTemporaries; ++i) {
    if (g_in_use[i]) ::unlink(g_temporary[i]);
  }
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

int remember_temporary(const std::string& path) {
  static const bool installed = [] {
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) std::signal(sig, remove_temporaries_and_reraise);
    return true;
  }();
  (void)installed;
  if (path.size() >= sizeof g_temporary[0]) return -1;
  for (int i = 0; i < kMaxTemporaries; ++i) {
    if (!g_in_use[i]) {
      std::memcpy(g_temporary[i], path.c_str(), path.size() + 1);
      g_in_use[i] = 1;
      return i;
    }
  }
  return -1;
}

void forget_temporary(int slot) {
  if (slot >= 0) g_in_use[slot] = 0;
}

}  // namespace

OutputFile::OutputFile(std::string path) : path_(std::move(path)) {
  if (is_stdout()) {
    stream_ = stdout;
    return;
  }
  struct stat existing {};
  if (::stat(path_.c_str(), &existing) == 0 && !S_ISREG(existing.st_mode)) {
    if (S_ISDIR(existing.st_mode)) throw UsageError("cannot write '" + path_ + "': it is a directory");
    stream_ = std::fopen(path_.c_str(), "wb");
    if (!stream_) throw UsageError("cannot write '" + path_ + "': " + std::strerror(errno));
    in_place_ = true;
    return;
  }
  const std::filesystem::path target(path_);
  const std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : ".";
  // Built by appending: GCC 12's -Wrestrict misreads "." + std::string&& (a false positive).
  std::string name = ".";
  name += target.filename().string();
  name += ".tmp.XXXXXX";
  std::string pattern = (dir / name).string();
  const int fd = mkstemp(pattern.data());
  if (fd < 0) throw UsageError("cannot write '" + path_ + "': " + std::strerror(errno));
  temp_path_ = pattern;
  temp_slot_ = remember_temporary(temp_path_);
  // mkstemp creates 0600; give the file the permissions a plain fopen would.
  const mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, 0666 & ~mask);
  stream_ = fdopen(fd, "wb");
  if (!stream_) {
    ::close(fd);
    std::remove(temp_path_.c_str());
    forget_temporary(temp_slot_);
    throw UsageError("cannot write '" + path_ + "': " + std::strerror(errno));
  }
}

OutputFile::~OutputFile() {
  if (is_stdout() || committed_) return;
  if (stream_) std::fclose(stream_);
  if (in_place_) return;
  std::remove(temp_path_.c_str());
  forget_temporary(temp_slot_);
}

void OutputFile::write(const void* data, std::size_t bytes) {
  if (bytes != 0 && std::fwrite(data, 1, bytes, stream_) != bytes) {
    throw UsageError("cannot write '" + path_ + "': " + std::strerror(errno));
  }
}

void OutputFile::reserve(std::uint64_t bytes) {
  if (is_stdout() || in_place_ || bytes == 0) return;
  // The return value is ignored on purpose: EOPNOTSUPP (tmpfs before Linux
  // 3.5, some network file systems) or ENOSPC leave the writes to allocate,
  // and a real lack of space is then reported by write().
  (void)::posix_fallocate(::fileno(stream_), 0, static_cast<off_t>(bytes));
}

void OutputFile::commit() {
  if (is_stdout()) {
    std::fflush(stdout);
    committed_ = true;
    return;
  }
  const bool ok = std::fflush(stream_) == 0 && std::fclose(stream_) == 0;
  stream_ = nullptr;
  if (in_place_) {
    committed_ = true;
    if (!ok) throw UsageError("cannot write '" + path_ + "': " + std::strerror(errno));
    return;
  }
  const bool renamed = ok && std::rename(temp_path_.c_str(), path_.c_str()) == 0;
  const int error = errno;
  if (!renamed) std::remove(temp_path_.c_str());
  forget_temporary(temp_slot_);
  committed_ = true;
  if (!renamed) throw UsageError("cannot write '" + path_ + "': " + std::strerror(error));
}

}  // namespace fmtcheck::cli
