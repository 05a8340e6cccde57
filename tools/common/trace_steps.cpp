#include "common/trace_steps.hpp"

#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "common/usage_error.hpp"

namespace fmtcheck::cli {
namespace {

namespace fs = std::filesystem;

std::vector<TraceStep> from_folder(const fs::path& dir) {
  static const std::regex step_file(R"(^step[_-]?(\d+)(.*)\.(npy|safetensors)$)");
  std::map<std::uint64_t, std::vector<std::string>> steps;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::smatch m;
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file() || !std::regex_match(name, m, step_file)) continue;
    std::uint64_t step = 0;
    const std::string digits = m[1];
    if (std::from_chars(digits.data(), digits.data() + digits.size(), step).ec != std::errc()) {
      throw UsageError("trace " + dir.string() + ": the step number of " + name + " does not fit in 64 bits");
    }
    steps[step].push_back(entry.path().string());
  }
  if (ec) throw UsageError("trace " + dir.string() + ": " + ec.message());
  if (steps.empty()) throw UsageError("trace " + dir.string() + ": no step files (expected names like step_0000.npy or step_0000.safetensors)");
  std::vector<TraceStep> out;
  std::uint64_t expected = steps.begin()->first;
  for (auto& [step, files] : steps) {
    if (step != expected) {
      throw UsageError("trace " + dir.string() + ": step " + std::to_string(expected) + " is missing (the steps jump from " +
                       std::to_string(expected - 1) + " to " + std::to_string(step) + ")");
    }
    std::sort(files.begin(), files.end());
    out.push_back({step, std::move(files)});
    ++expected;
  }
  return out;
}

std::vector<TraceStep> from_manifest(const fs::path& manifest) {
  std::ifstream in(manifest);
  if (!in) throw UsageError("trace " + manifest.string() + ": cannot open for reading");
  std::vector<TraceStep> out;
  std::string line;
  for (std::uint64_t line_no = 1; std::getline(in, line); ++line_no) {
    const std::string content = line.substr(0, line.find('#'));
    std::istringstream words(content);
    TraceStep step{out.size(), {}};
    for (std::string word; words >> word;) {
      const fs::path p = fs::path(word).is_absolute() ? fs::path(word) : manifest.parent_path() / word;
      // With an error code: a name the system refuses (longer than it
      // allows) is an error of the manifest, not an exception.
      std::error_code ec;
      if (!fs::is_regular_file(p, ec)) {
        const std::string refused = lookup_refusal(ec);
        throw UsageError("trace " + manifest.string() + " line " + std::to_string(line_no) + ": step " +
                         std::to_string(step.step) + " file '" + p.string() + "' " +
                         (refused.empty() ? "does not exist" : "cannot be read: " + refused));
      }
      step.files.push_back(p.string());
    }
    if (!step.files.empty()) out.push_back(std::move(step));
  }
  if (out.empty()) throw UsageError("trace " + manifest.string() + ": the manifest lists no files");
  return out;
}

}  // namespace

std::string trace_tensor_name(const std::string& file, const std::string& tensor) {
  const fs::path p(file);
  if (p.extension() != ".npy") return tensor;
  static const std::regex step_prefix(R"(^step[_-]?\d+[_.-]?)");
  const std::string rest = std::regex_replace(p.stem().string(), step_prefix, "");
  return rest.empty() ? "gradient" : rest;
}

std::vector<TraceStep> list_trace(const std::string& path) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (ec || !fs::exists(status)) throw UsageError("trace " + path + ": no such file or folder");
  return fs::is_directory(status) ? from_folder(path) : from_manifest(path);
}

}  // namespace fmtcheck::cli
