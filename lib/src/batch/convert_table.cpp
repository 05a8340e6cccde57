#include "batch/convert_table.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <mutex>
#include <utility>

#include "fmtcheck/core/round_to_format.hpp"
#include "fmtcheck/core/unpacked.hpp"

namespace fmtcheck::detail {
namespace {

constexpr std::size_t kBuckets = std::size_t{1} << (32 - kTableLowBits);
constexpr std::uint32_t kLowMask = (std::uint32_t{1} << kTableLowBits) - 1;

std::uint32_t entry(const Rounder& round, std::uint32_t bits) {
  const Conversion c = round(unpack(std::bit_cast<float>(bits)));
  return static_cast<std::uint32_t>(c.bits) | static_cast<std::uint32_t>(c.flags.bits()) << 8;
}

// The table, or null where some bucket's later patterns do not share one
// result.
std::shared_ptr<const ConvertTable> build(const Format& f, const Policy& p) {
  const Rounder round(f, p);
  auto table = std::make_shared<ConvertTable>();
  table->entries.resize(2 * kBuckets);
  for (std::size_t b = 0; b < kBuckets; ++b) {
    const auto start = static_cast<std::uint32_t>(b << kTableLowBits);
    const std::uint32_t rest = entry(round, start + 1);
    if (entry(round, start + kLowMask / 2) != rest || entry(round, start + kLowMask) != rest) return nullptr;
    table->entries[2 * b] = entry(round, start);
    table->entries[2 * b + 1] = rest;
  }
  return table;
}

}  // namespace

bool table_serves(const Format& f, const Policy& p) {
  const auto members = p3109_formats();
  if (std::find(members.begin(), members.end(), f) == members.end()) return false;
  Policy rest = p;
  rest.overflow = Overflow::nosat;
  rest.rounding = Rounding::rne;
  const bool deterministic = p.rounding == Rounding::rne || p.rounding == Rounding::rna ||
                             p.rounding == Rounding::rtz || p.rounding == Rounding::rup ||
                             p.rounding == Rounding::rdn;
  return deterministic && rest == Policy{};
}

std::shared_ptr<const ConvertTable> convert_table(const Format& f, const Policy& p) {
  if (!table_serves(f, p)) return nullptr;
  // A sweep or a threaded conversion asks once per chunk, from every
  // thread: the tables of the last few pairs are kept (1 MiB each).
  struct Kept {
    Format format;
    Policy policy;
    std::shared_ptr<const ConvertTable> table;
  };
  static std::mutex mutex;
  static std::vector<Kept> kept;
  constexpr std::size_t kKeep = 4;
  const std::lock_guard<std::mutex> lock(mutex);
  for (const Kept& k : kept) {
    if (k.format == f && k.policy == p) return k.table;
  }
  auto table = build(f, p);
  if (kept.size() == kKeep) kept.erase(kept.begin());
  kept.push_back({f, p, table});
  return table;
}

void convert_with_table(const ConvertTable& table, const float* in, std::size_t n, std::uint8_t* out,
                        FlagCounts* counts) {
  // Counted by flag combination, added once at the end (as the core's
  // batch does), in four tallies taken in turn: consecutive inputs mostly
  // share their flags, and one tally would make each count wait for the
  // previous one's store.
  constexpr std::size_t kTallies = 4;
  std::array<std::array<std::uint64_t, std::size_t{1} << flag_count>, kTallies> by_flags{};
  const std::uint32_t* entries = table.entries.data();
  const auto convert = [&](std::size_t i, std::size_t tally) {
    const auto bits = std::bit_cast<std::uint32_t>(in[i]);
    const std::uint32_t e = entries[2 * (bits >> kTableLowBits) + ((bits & kLowMask) != 0 ? 1 : 0)];
    out[i] = static_cast<std::uint8_t>(e);
    ++by_flags[tally][e >> 8];
  };
  std::size_t i = 0;
  for (; i + kTallies <= n; i += kTallies) {
    for (std::size_t t = 0; t < kTallies; ++t) convert(i + t, t);
  }
  for (; i < n; ++i) convert(i, 0);
  for (std::size_t bits = 0; bits < by_flags[0].size(); ++bits) {
    std::uint64_t count = 0;
    for (const auto& tally : by_flags) count += tally[bits];
    if (count != 0) counts->add(Flags(static_cast<std::uint16_t>(bits)), count);
  }
}

}  // namespace fmtcheck::detail
