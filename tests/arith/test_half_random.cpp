// fp16 and bf16: every operation under every policy of policies.hpp against
// the exact Boost reference, bits and flags, on random operands mixed with
// boundary operands (zeros, the smallest and largest subnormals and normals,
// max, infinities, NaNs, values near 1 and near the overflow threshold).
// sqrt takes every operand. FMTCHECK_ARITH_RANDOM sets the number of random
// cases per operation, format and policy: the default 400000 makes
// 2 formats x 29 policies x 5 operations x 400000 = 1.16 x 10^8 operations,
// the 10^8 (about 45 s of CPU: the reference works from per-format
// tables, ~0.35 us per operation; the fixed part, tables and sqrt, ~5 s).
#include <doctest/doctest.h>

#include <cstdlib>

#include "check.hpp"
#include "operands.hpp"
#include "parallel.hpp"
#include "reference_ops.hpp"

using namespace fmtcheck;
using namespace fmtcheck::testing;

namespace {

std::uint64_t random_count() {
  const char* env = std::getenv("FMTCHECK_ARITH_RANDOM");
  return env != nullptr ? std::strtoull(env, nullptr, 10) : 400000;
}

std::vector<Policy> all_policies() {
  auto out = arithmetic_policies();
  for (const Policy& p : single_axis_policies()) out.push_back(p);
  return out;
}

void random_cases(const Format& f, const Policy& p, std::uint64_t seed) {
  const Operands ops(f);
  const auto result = parallel_check(
      random_count(), [&] { return reference::Table(f); },
      [&](reference::Table& table, std::uint64_t i, std::string& what) {
        reference::Arithmetic ref(table);
        ref.set_policy(p);
        const std::uint64_t a = ops.pick(seed, i, 0), b = ops.pick(seed, i, 1), c = ops.pick(seed, i, 2);
        return agrees(add(f, a, b, p), ref.add(a, b), "add", f, p, {a, b}, what) &&
               agrees(sub(f, a, b, p), ref.sub(a, b), "sub", f, p, {a, b}, what) &&
               agrees(mul(f, a, b, p), ref.mul(a, b), "mul", f, p, {a, b}, what) &&
               agrees(div(f, a, b, p), ref.div(a, b), "div", f, p, {a, b}, what) &&
               agrees(fma(f, a, b, c, p), ref.fma(a, b, c), "fma", f, p, {a, b, c}, what);
      });
  CHECK_MESSAGE(result.count == 0, f.name, " ", policy_text(p), ": ", result.count, " mismatches; first: ",
                result.examples.empty() ? "" : result.examples.front());
}

}  // namespace

TEST_CASE("fp16 and bf16: add, sub, mul, div, fma on random and boundary operands, every policy") {
  std::uint64_t seed = 1;
  for (const Format& f : {formats::fp16, formats::bf16}) {
    for (const Policy& p : all_policies()) random_cases(f, p, seed++);
  }
}

TEST_CASE("fp16 and bf16: sqrt of every operand, every policy") {
  for (const Format& f : {formats::fp16, formats::bf16}) {
    for (const Policy& p : all_policies()) {
      const auto result = parallel_check(
          65536, [&] { return reference::Table(f); },
          [&](reference::Table& table, std::uint64_t a, std::string& what) {
            reference::Arithmetic ref(table);
            ref.set_policy(p);
            return agrees(sqrt(f, a, p), ref.sqrt(a), "sqrt", f, p, {a}, what);
          });
      CHECK_MESSAGE(result.count == 0, f.name, " ", policy_text(p), ": ", result.count, " mismatches; first: ",
                    result.examples.empty() ? "" : result.examples.front());
    }
  }
}
