#include "agreement.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdio>
#include <random>
#include <thread>

#include "fmtcheck/core/convert.hpp"
#include "reference_rounding.hpp"

namespace fmtcheck::reference {
namespace {

constexpr std::size_t kMaxExamples = 8;
constexpr NanConvention kConventions[] = {NanConvention::ieee, NanConvention::cuda, NanConvention::canonical};

template <typename T>
std::string show_input(T x) {
  char buf[96];
  if constexpr (sizeof(T) == 4) {
    std::snprintf(buf, sizeof buf, "float 0x%08x (%a)", std::bit_cast<std::uint32_t>(x), static_cast<double>(x));
  } else {
    std::snprintf(buf, sizeof buf, "double 0x%016llx (%a)",
                  static_cast<unsigned long long>(std::bit_cast<std::uint64_t>(x)), x);
  }
  return buf;
}

std::string show(const Conversion& c) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx ", static_cast<unsigned long long>(c.bits));
  return buf + describe(c.flags);
}

// Compares one input under one policy.
template <typename T>
void compare(const ReferenceFormat& reference, const Format& format, T x, const Input& in, const Position& at,
             const Policy& p, Tally& tally) {
  const Conversion expected = convert(reference, in, at, p);
  const Conversion got = fmtcheck::convert(x, format, p);
  ++tally.evaluations;
  if (expected == got) return;
  ++tally.mismatches;
  if (tally.examples.size() < kMaxExamples) {
    std::string policy = describe(p);
    if (p.rounding == Rounding::sr) {
      policy += ",sr" + std::to_string(p.random_bit_count) + " random=" + std::to_string(p.random_bits);
    }
    tally.examples.push_back(format.name + " " + show_input(x) + " [" + policy + "]: reference " + show(expected) +
                             ", fmtcheck " + show(got));
  }
}

template <typename T>
Tally check_chunk(const ReferenceFormat& reference, const Format& format, std::span<const T> inputs,
                  std::span<const Policy> policies, std::size_t first_index, std::mt19937_64& rng) {
  Tally tally;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const T x = inputs[i];
    const Input in = std::is_same_v<T, float> ? from_float(static_cast<float>(x)) : from_double(static_cast<double>(x));
    const bool finite = in.kind == Input::Kind::finite;
    const Position at = finite ? locate(reference, in.magnitude) : Position{};
    ++tally.inputs;
    for (Policy p : policies) {
      if (p.rounding == Rounding::sr) {
        const std::uint64_t r = rng();
        const std::uint32_t mask = p.random_bit_count == 32 ? 0xFFFFFFFFu : (1u << p.random_bit_count) - 1;
        p.random_bits = (r & 7) == 0 ? ((r & 8) ? mask : 0) : static_cast<std::uint32_t>(r >> 32);
      }
      if (finite) {
        p.nan = kConventions[(first_index + i) % 3];
        compare(reference, format, x, in, at, p, tally);
      } else {
        for (NanConvention c : kConventions) {
          p.nan = c;
          compare(reference, format, x, in, at, p, tally);
        }
      }
    }
  }
  return tally;
}

}  // namespace

void Tally::merge(const Tally& other) {
  inputs += other.inputs;
  evaluations += other.evaluations;
  mismatches += other.mismatches;
  for (const std::string& e : other.examples) {
    if (examples.size() < kMaxExamples) examples.push_back(e);
  }
}

std::string Tally::summary() const {
  std::string s = std::to_string(inputs) + " inputs, " + std::to_string(evaluations) + " comparisons, " +
                  std::to_string(mismatches) + " mismatches";
  for (const std::string& e : examples) s += "\n  " + e;
  return s;
}

std::vector<RoundingChoice> every_rounding() {
  std::vector<RoundingChoice> r;
  for (Rounding m : {Rounding::rne, Rounding::rna, Rounding::rtz, Rounding::rup, Rounding::rdn, Rounding::rto}) {
    r.push_back({m, 0});
  }
  for (int n : {1, 3, 8, 13, 32}) r.push_back({Rounding::sr, n});
  return r;
}

std::vector<Policy> policy_matrix(std::span<const RoundingChoice> roundings) {
  std::vector<Policy> out;
  for (const RoundingChoice& r : roundings) {
    for (Overflow o : {Overflow::sat, Overflow::nosat}) {
      for (Subnormals s : {Subnormals::keep, Subnormals::ftz, Subnormals::daz, Subnormals::ftz_daz}) {
        for (Tininess t : {Tininess::after, Tininess::before}) {
          Policy p;
          p.rounding = r.rounding;
          p.random_bit_count = r.sr_bits;
          p.overflow = o;
          p.subnormals = s;
          p.tininess = t;
          out.push_back(p);
        }
      }
    }
  }
  return out;
}

std::vector<Policy> rounding_only(std::span<const RoundingChoice> roundings) {
  std::vector<Policy> out;
  for (const RoundingChoice& r : roundings) {
    Policy p;
    p.rounding = r.rounding;
    p.random_bit_count = r.sr_bits;
    out.push_back(p);
  }
  return out;
}

template <typename T>
Tally check_agreement(const ReferenceFormat& reference, const Format& format, std::span<const T> inputs,
                      std::span<const Policy> policies, std::uint64_t seed) {
  // Fixed chunks, each with its own generator, so results do not depend on
  // the number of threads.
  constexpr std::size_t kChunks = 64;
  std::vector<Tally> tallies(kChunks);
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t c = next++; c < kChunks; c = next++) {
      const std::size_t begin = inputs.size() * c / kChunks;
      const std::size_t end = inputs.size() * (c + 1) / kChunks;
      std::mt19937_64 rng(seed + 0x9E3779B97F4A7C15ull * (c + 1));
      tallies[c] = check_chunk(reference, format, inputs.subspan(begin, end - begin), policies, begin, rng);
    }
  };
  std::vector<std::thread> pool;
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(work);
  for (auto& th : pool) th.join();
  Tally total;
  for (const Tally& t : tallies) total.merge(t);
  return total;
}

template Tally check_agreement<float>(const ReferenceFormat&, const Format&, std::span<const float>,
                                      std::span<const Policy>, std::uint64_t);
template Tally check_agreement<double>(const ReferenceFormat&, const Format&, std::span<const double>,
                                       std::span<const Policy>, std::uint64_t);

}  // namespace fmtcheck::reference
