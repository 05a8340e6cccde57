// The GPU emulator's exhaustive proof and its speed, on a GPU
// (cuda/run-hardware-comparison.sh --steps emulator):
//
//   cuda-emulator-sweep [--table FILE]       every pair of the committed table
//   cuda-emulator-sweep PAIR...              these pairs, the CPU computing alongside
//   cuda-emulator-sweep --write-table FILE   the table, from the CPU (no GPU needed)
//   cuda-emulator-sweep --check-table N      N rows of the table recomputed by the CPU (CI)
//
// A pair is FORMAT:ROUND:OVERFLOW:SUBNORMALS:NAN[:SR_BITS]. For each, every float32 input (2^32
// bit patterns) is converted on the GPU and by the CPU's batch conversion: the flag counts and an
// order-free digest of every (input, code) pair must be equal (stochastic modes draw from the same
// RandomStream, seed 1). The table (cuda/emulator_sweep_digests.csv) holds the CPU's digests for
// the 521 pairs of table_pairs(), every combination the CPU's exhaustive tests cover, so that the
// GPU's proof costs the GPU's time only; a row the GPU disagrees with is recomputed by the CPU
// there, which tells a GPU difference from a stale row. First the speed: a 1 GiB float32 buffer
// converted into e4m3 and bf16 with flag counts, and as many e4m3 and bf16 codes decoded into
// float32, against a device-to-device copy of the same buffer, medians of 20.
// Exit 0 when the GPU agrees with the CPU on every pair, 1 otherwise, 77 without a GPU.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "fmtcheck/batch/float32_sweep.hpp"
#include "fmtcheck/core/policy_text.hpp"
#include "fmtcheck/cuda/emulated_convert.hpp"
#include "gpu_or_skip.hpp"
#include "source_path.hpp"

using namespace fmtcheck;

namespace {

constexpr std::uint64_t kSeed = 1;

// Every pair the CPU's exhaustive tests cover (tests/oracle: CUDA's host conversions, F16C;
// tests/python: ml_dtypes, gfloat's 450 P3109 combinations; tests/torch: torch's casts), and the
// policy axes beyond them: stochastic rounding, rto, flushing, user formats.
std::vector<std::string> table_pairs() {
  std::vector<std::string> pairs;
  const auto add = [&](const std::string& format, const std::string& rest) { pairs.push_back(format + ":" + rest); };
  for (const char* round : {"rne", "rtz", "rup", "rdn"}) {
    for (const char* nan : {"cuda", "ieee"}) add("fp16", std::string(round) + ":nosat:keep:" + nan);
  }
  for (const char* rest : {"rne:nosat:keep:cuda", "rne:sat:keep:cuda", "rtz:nosat:keep:cuda", "rup:nosat:keep:cuda",
                           "rdn:nosat:keep:cuda", "rne:nosat:keep:canonical", "rne:nosat:keep:ml_dtypes",
                           "rne:nosat:keep:torch"}) {
    add("bf16", rest);
  }
  for (const char* f : {"e4m3", "e5m2"}) {
    for (const char* rest : {"rne:sat:keep:cuda", "rne:nosat:keep:cuda", "rne:nosat:keep:ml_dtypes",
                             "rne:nosat:keep:torch"}) {
      add(f, rest);
    }
  }
  for (const char* f : {"e4m3fnuz", "e5m2fnuz"}) {
    for (const char* rest : {"rne:nosat:keep:ml_dtypes", "rne:nosat:keep:torch"}) add(f, rest);
  }
  for (const char* f : {"e2m3", "e3m2", "e2m1"}) {
    for (const char* rest : {"rne:sat:keep:cuda", "rne:nosat:keep:ml_dtypes"}) add(f, rest);
  }
  for (const char* rest : {"rtz:nosat:keep:cuda", "rtz:sat:keep:cuda", "rup:nosat:keep:cuda", "rup:sat:keep:cuda",
                           "rne:nosat:keep:ml_dtypes"}) {
    add("e8m0", rest);
  }
  for (const char* rest : {"rna:nosat:keep:cuda", "rne:nosat:keep:ieee", "rtz:nosat:keep:cuda"}) add("tf32", rest);
  for (const Format& f : p3109_formats()) {
    for (const char* round : {"rne", "rna", "rtz", "rup", "rdn"}) {
      for (const char* overflow : {"nosat", "sat", "satprop"}) add(f.name, std::string(round) + ":" + overflow + ":keep:ieee");
    }
  }
  for (const char* round : {"sr", "sr-rne", "sr-rna", "sr-rno"}) {
    add("fp16", std::string(round) + ":nosat:keep:ieee:16");
    add("bf16", std::string(round) + ":sat:keep:ieee:8");
    add("e4m3", std::string(round) + ":sat:keep:cuda:16");
    add("e2m1", std::string(round) + ":sat:keep:ieee:8");
  }
  for (const char* rest : {"rto:nosat:keep:ieee", "rne:nosat:ftz:ieee", "rne:nosat:daz:ieee", "rne:nosat:ftz+daz:ieee"}) {
    add("fp16", rest);
    add("e4m3", rest);
  }
  add("e3m2", "rto:sat:keep:ieee");
  add("e5m2", "rne:satprop:ftz+daz:ieee");
  add("e6m9", "rup:nosat:ftz:ieee");
  add("e3m4fn", "rne:sat:keep:ieee");
  add("e5m2fnuz_b15", "rna:nosat:keep:ieee");
  return pairs;
}

struct Pair {
  std::string text;
  Format format;
  Policy policy;
};

Pair parse(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream ss(text);
  for (std::string part; std::getline(ss, part, ':');) parts.push_back(part);
  if (parts.size() < 5 || parts.size() > 6) {
    throw std::invalid_argument("bad pair '" + text + "': expected FORMAT:ROUND:OVERFLOW:SUBNORMALS:NAN[:SR_BITS]");
  }
  PolicyText t;
  t.round = parts[1];
  t.overflow = parts[2];
  t.subnormals = parts[3];
  t.nan = parts[4];
  t.sr_bits = parts.size() == 6 ? std::stoi(parts[5]) : 0;
  return {text, format_from_string(parts[0]), policy_from_text(t)};
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

Float32Sweep cpu_sweep(const Pair& pair) { return sweep_every_float32(pair.format, pair.policy, kSeed); }

bool same(const Float32Sweep& a, const Float32Sweep& b) {
  return a.digest == b.digest && a.flags.values == b.flags.values && a.flags.count == b.flags.count;
}

// The table: a header line, then per pair "pair,digest (hex),values,count of each flag".
struct Row {
  std::string pair;
  Float32Sweep cpu;
};

std::vector<Row> read_table(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read the digest table " + path);
  std::vector<Row> rows;
  std::string line;
  std::getline(in, line);  // the header
  while (std::getline(in, line)) {
    std::stringstream ss(line);
    std::vector<std::string> cells;
    for (std::string cell; std::getline(ss, cell, ',');) cells.push_back(cell);
    if (cells.size() != 3 + flag_count) throw std::runtime_error(path + ": bad row '" + line + "'");
    Row r{cells[0], {}};
    r.cpu.digest = std::stoull(cells[1], nullptr, 16);
    r.cpu.flags.values = std::stoull(cells[2]);
    for (int i = 0; i < flag_count; ++i) r.cpu.flags.count[i] = std::stoull(cells[3 + i]);
    rows.push_back(r);
  }
  return rows;
}

// Every pair of table_pairs() by the CPU, into `path` (whole or not at all).
int write_table(const std::string& path) {
  const std::string temporary = path + ".partial";
  std::ofstream out(temporary);
  out << "pair,digest,values";
  for (int i = 0; i < flag_count; ++i) out << "," << to_string(static_cast<Flag>(i));
  out << "\n";
  for (const std::string& text : table_pairs()) {
    const auto start = std::chrono::steady_clock::now();
    const Float32Sweep cpu = cpu_sweep(parse(text));
    char digest[17];
    std::snprintf(digest, sizeof digest, "%016llx", static_cast<unsigned long long>(cpu.digest));
    out << text << "," << digest << "," << cpu.flags.values;
    for (const std::uint64_t c : cpu.flags.count) out << "," << c;
    out << "\n";
    std::printf("%-34s %8.2f s\n", text.c_str(), seconds_since(start));
    std::fflush(stdout);
  }
  out.close();
  if (!out || std::rename(temporary.c_str(), path.c_str()) != 0) throw std::runtime_error("cannot write " + path);
  return 0;
}

// `count` rows spread over the table, recomputed by the CPU: whether the
// table is still the library's (CI runs this without a GPU).
int check_table(const std::string& path, std::size_t count) {
  const std::vector<Row> rows = read_table(path);
  const std::vector<std::string> pairs = table_pairs();
  if (rows.size() != pairs.size()) {
    std::printf("FAIL: the table has %zu rows, table_pairs() %zu pairs: regenerate it (--write-table)\n",
                rows.size(), pairs.size());
    return 1;
  }
  int stale = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].pair != pairs[i]) {
      std::printf("FAIL: row %zu is %s, not %s: regenerate the table (--write-table)\n", i, rows[i].pair.c_str(),
                  pairs[i].c_str());
      return 1;
    }
  }
  for (std::size_t j = 0; j < count; ++j) {
    const Row& row = rows[j * (rows.size() - 1) / std::max<std::size_t>(count - 1, 1)];
    const bool agree = same(cpu_sweep(parse(row.pair)), row.cpu);
    stale += agree ? 0 : 1;
    std::printf("%-34s %s\n", row.pair.c_str(), agree ? "as committed" : "STALE");
  }
  std::printf(stale ? "FAIL: %d rows differ from the CPU library: regenerate the table (--write-table)\n"
                    : "PASS: the sampled rows are the CPU library's digests (%d stale)\n",
              stale);
  return stale ? 1 : 0;
}

// Median milliseconds of 20 runs of f, timed with device events after 3 warm-ups.
template <class F>
double median_ms(F f) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  for (int i = 0; i < 3; ++i) f();
  std::vector<float> ms;
  for (int i = 0; i < 20; ++i) {
    cudaEventRecord(start);
    f();
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float t = 0;
    cudaEventElapsedTime(&t, start, stop);
    ms.push_back(t);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

void speed() {
  const std::size_t n = std::size_t{1} << 28;  // 1 GiB of float32
  float* in = nullptr;
  void* out = nullptr;
  void* copy = nullptr;
  if (cudaMalloc(&in, n * 4) != cudaSuccess || cudaMalloc(&out, n * 4) != cudaSuccess ||
      cudaMalloc(&copy, n * 4) != cudaSuccess) {
    std::printf("speed: not measured (cudaMalloc of 3 GiB failed)\n");
    return;
  }
  // Varied data: a ramp of float32 bit patterns over the normal range.
  std::vector<std::uint32_t> host(n);
  for (std::size_t i = 0; i < n; ++i) host[i] = 0x30000000u + static_cast<std::uint32_t>(i * 2654435761u % 0x1F000000u);
  cudaMemcpy(in, host.data(), n * 4, cudaMemcpyHostToDevice);
  const double copy_ms = median_ms([&] { cudaMemcpy(copy, in, n * 4, cudaMemcpyDeviceToDevice); });
  const double copy_gbs = 2.0 * n * 4 / copy_ms / 1e6;  // bytes read + written
  std::printf("%-30s %10s %12s %14s\n", "1 GiB float32 ->", "ms", "G values/s", "of copy GB/s");
  std::printf("%-30s %10.3f %12.1f %13.0f%%\n", "device-to-device copy", copy_ms, n / copy_ms / 1e6, 100.0);
  for (const char* text : {"e4m3:rne:sat:keep:cuda", "bf16:rne:nosat:keep:ieee", "e4m3:sr:sat:keep:ieee:16"}) {
    const Pair pair = parse(text);
    const double ms = median_ms([&] { cuda::convert_device_buffer(in, n, pair.format, pair.policy, out, kSeed); });
    const double gbs = (n * 4.0 + n * pair.format.storage_bits / 8.0) / ms / 1e6;
    std::printf("%-30s %10.3f %12.1f %13.0f%%\n", text, ms, n / ms / 1e6, 100.0 * gbs / copy_gbs);
  }
  // And back: the same number of codes decoded into float32.
  for (const char* name : {"e4m3", "bf16"}) {
    const Format f = format_from_string(name);
    cuda::convert_device_buffer(in, n, f, Policy{}, out);
    const double ms = median_ms([&] { cuda::decode_device_buffer(out, n, f, copy); });
    const double gbs = (n * f.storage_bits / 8.0 + n * 4.0) / ms / 1e6;
    const std::string text = std::string("decode ") + name + " -> float32";
    std::printf("%-30s %10.3f %12.1f %13.0f%%\n", text.c_str(), ms, n / ms / 1e6, 100.0 * gbs / copy_gbs);
  }
  cudaFree(in);
  cudaFree(out);
  cudaFree(copy);
}

// The GPU against the CPU on each pair: the committed CPU digest where
// `table` has the pair, else (or where they differ) the CPU's, computed now.
int compare(const std::vector<std::string>& texts, const std::vector<Row>& table) {
  int failed = 0, stale = 0;
  std::printf("%-34s %8s %8s %18s  %s\n", "format:policy (every float32)", "GPU s", "CPU s", "digest", "verdict");
  for (const std::string& text : texts) {
    const Pair pair = parse(text);
    auto start = std::chrono::steady_clock::now();
    const Float32Sweep gpu = cuda::sweep_every_float32_on_gpu(pair.format, pair.policy, kSeed);
    const double gpu_s = seconds_since(start);
    const auto row = std::find_if(table.begin(), table.end(), [&](const Row& r) { return r.pair == text; });
    bool agree = row != table.end() && same(gpu, row->cpu);
    double cpu_s = 0;
    const char* verdict = "equal (committed)";
    if (!agree) {
      start = std::chrono::steady_clock::now();
      agree = same(gpu, cpu_sweep(pair));
      cpu_s = seconds_since(start);
      verdict = !agree ? "DIFFERENT" : row == table.end() ? "equal" : "equal (row stale)";
      stale += agree && row != table.end() ? 1 : 0;
    }
    agree = agree && gpu.flags.values == (std::uint64_t{1} << 32);
    failed += agree ? 0 : 1;
    std::printf("%-34s %8.3f %8.2f %18llx  %s\n", text.c_str(), gpu_s, cpu_s,
                static_cast<unsigned long long>(gpu.digest), agree ? verdict : "DIFFERENT");
  }
  if (stale) std::printf("%d committed rows are stale: regenerate the table (--write-table)\n", stale);
  if (failed) {
    std::printf("FAIL: %d of %zu pairs differ between the GPU and the CPU\n", failed, texts.size());
    return 1;
  }
  std::printf("PASS: all %zu pairs equal on all 2^32 float32 inputs, codes and flag counts\n", texts.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  const std::string committed = source_path("cuda/emulator_sweep_digests.csv").string();
  try {
    if (args.size() == 2 && args[0] == "--write-table") return write_table(args[1]);
    if (args.size() == 2 && args[0] == "--check-table") return check_table(committed, std::stoul(args[1]));
    exit_unless_a_gpu();
    speed();  // first, so that the proof's verdict ends the output
    int status = 0;
    if (args.empty() || (args.size() == 2 && args[0] == "--table")) {
      const std::vector<Row> table = read_table(args.empty() ? committed : args[1]);
      std::vector<std::string> texts;
      for (const Row& r : table) texts.push_back(r.pair);
      status = compare(texts, table);
    } else {
      status = compare(args, {});
    }
    return status;
  } catch (const std::exception& e) {
    std::printf("cuda-emulator-sweep: %s\n", e.what());
    return 2;
  }
}
