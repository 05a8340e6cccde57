// Hardware against emulator: every difference with its inputs, both
// outputs and their difference, as a table for people and CSV for notebooks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fmtcheck/core/format.hpp"

namespace fmtcheck::cuda {

struct Difference {
  std::string inputs;  // how to reproduce the case: input bits in hex
  std::uint64_t hardware = 0;
  std::uint64_t emulator = 0;
};

// One comparison: what ran on both sides and where they differ.
struct Comparison {
  Comparison(std::string title_, Format output_) : title(std::move(title_)), output(std::move(output_)) {}

  std::string title;  // "fp16 rtz", "mma m16n8k16 fp16->fp32 vs hopper"
  Format output;      // format of both outputs
  std::uint64_t compared = 0;
  std::uint64_t differing = 0;        // all differences, even those not kept
  std::vector<Difference> kept;       // the first max_kept of them
  std::size_t max_kept = 100000;
  // Set when the emulator side is known not to model the hardware (no
  // published model): differences are listed but do not fail the run.
  std::string known_gap;

  // Counts one compared case; inputs() is called only for a difference.
  template <class Inputs>
  void check(std::uint64_t hardware, std::uint64_t emulator, Inputs&& inputs) {
    ++compared;
    if (hardware == emulator) return;
    ++differing;
    if (kept.size() < max_kept) kept.push_back({inputs(), hardware, emulator});
  }
  [[nodiscard]] bool unexplained() const { return differing != 0 && known_gap.empty(); }
};

// hardware − emulator as an exact value in decimal ("-1.1920928955078125e-07"
// style, shortest round trip of the double, exact for every format here),
// "nan" when either is NaN and they differ, "inf" for inf − finite.
std::string value_difference(const Format& f, std::uint64_t hardware, std::uint64_t emulator);
// Distance in units in the last place: codes apart in the order of values
// (+0 and −0 are one value); nullopt-like -1 when either is NaN.
long long ulp_distance(const Format& f, std::uint64_t hardware, std::uint64_t emulator);

// "fp16 rtz: 4294967296 compared, 0 differ" (+ " (known gap: ...)").
std::string summary_line(const Comparison& c);
// The first max_rows differences within 100 columns: one aligned row each
// (inputs, hardware, emulator, values, difference, ulps) where that fits, else
// the results on one line and the inputs wrapped below them.
std::string difference_table(const Comparison& c, std::size_t max_rows);
// Every kept difference of every comparison, one CSV row each, with a header:
// comparison,inputs,hardware_bits,emulator_bits,hardware_value,emulator_value,difference,ulps
std::string differences_csv(const std::vector<Comparison>& all);
// 1 when any comparison has unexplained differences, else 0.
int exit_code(const std::vector<Comparison>& all);

}  // namespace fmtcheck::cuda
