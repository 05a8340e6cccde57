// fma for every 8-bit and narrower format against the exact Boost reference,
// bits and flags: every triple (2^24 per 8-bit format) under the default
// policy (rne). Every other policy of policies.hpp gets every triple for the
// 6- and 4-bit formats and, in this default build, every 97th triple (173k
// per 8-bit format, spread over all a, b and c) for the 8-bit ones; the
// arith-fma-all-modes build (label exhaustive) runs every triple in every
// rounding mode (stochastic with three draws).
#include <doctest/doctest.h>

#include "check.hpp"
#include "parallel.hpp"
#include "reference_ops.hpp"

using namespace fmtcheck;
using namespace fmtcheck::testing;

namespace {

constexpr std::uint64_t kSampleStride = 97;  // prime, so the sample walks through every a, b and c

void check_fma(const Format& f, const Policy& p, std::uint64_t stride) {
  const std::uint64_t n = std::uint64_t{1} << f.width();
  const std::uint64_t total = n * n * n;
  const auto result = parallel_check(
      (total + stride - 1) / stride, [&] { return reference::Table(f); },
      [&](reference::Table& table, std::uint64_t i, std::string& what) {
        reference::Arithmetic ref(table);
        ref.set_policy(p);
        const std::uint64_t t = i * stride;
        const std::uint64_t a = t / (n * n), b = (t / n) % n, c = t % n;
        return agrees(fma(f, a, b, c, p), ref.fma(a, b, c), "fma", f, p, {a, b, c}, what);
      });
  CHECK_MESSAGE(result.count == 0, f.name, " ", policy_text(p), ": ", result.count, " mismatches; first: ",
                result.examples.empty() ? "" : result.examples.front());
}

}  // namespace

TEST_CASE("fma: every triple of every small format under rne") {
  for (const Format& f : small_formats()) check_fma(f, Policy{}, 1);
}

#ifdef FMTCHECK_FMA_ALL_POLICIES
TEST_CASE("fma: every triple of every small format in every other rounding mode") {
  for (const Format& f : small_formats()) {
    for (const Policy& p : arithmetic_policies(/*only_default_axes=*/true)) {
      if (p != Policy{}) check_fma(f, p, 1);
    }
  }
}
#else
TEST_CASE("fma: the other policies, every triple for 6- and 4-bit formats, sampled for 8-bit") {
  auto policies = arithmetic_policies();
  for (const Policy& p : single_axis_policies()) policies.push_back(p);
  for (const Format& f : small_formats()) {
    for (const Policy& p : policies) {
      if (p == Policy{}) continue;
      check_fma(f, p, f.width() < 8 ? 1 : kSampleStride);
    }
  }
}
#endif
