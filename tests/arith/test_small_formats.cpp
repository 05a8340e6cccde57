// Exhaustive proof for every 8-bit and narrower format: every operand pair of
// add, sub, mul, div and every operand of sqrt, under every policy of
// policies.hpp, against the exact Boost reference, bits and flags.
#include <doctest/doctest.h>

#include <cmath>

#include "check.hpp"
#include "fmtcheck/core/convert.hpp"
#include "parallel.hpp"
#include "reference_ops.hpp"

using namespace fmtcheck;
using namespace fmtcheck::testing;

namespace {

std::vector<Policy> all_policies() {
  auto out = arithmetic_policies();
  for (const Policy& p : single_axis_policies()) out.push_back(p);
  return out;
}

}  // namespace

TEST_CASE("reference tables match the format facts of DESIGN.md") {
  // Independent anchor for the reference's decoding: the published numbers.
  struct Row { Format f; double max; double min_positive; };
  for (const Row& r : {Row{formats::e4m3, 448, 0x1p-9}, Row{formats::e5m2, 57344, 0x1p-16},
                       Row{formats::e4m3fnuz, 240, 0x1p-10}, Row{formats::e5m2fnuz, 57344, 0x1p-17},
                       Row{formats::e2m3, 7.5, 0.125}, Row{formats::e3m2, 28, 0.0625}, Row{formats::e2m1, 6, 0.5},
                       Row{formats::e8m0, 0x1p127, 0x1p-127}, Row{formats::fp16, 65504, 0x1p-24},
                       Row{formats::bf16, 0x1.fep127, 0x1p-133}}) {
    const reference::Table t(r.f);
    CAPTURE(r.f.name);
    CHECK(std::ldexp(t.max_finite().convert_to<double>(), -t.q()) == r.max);
    CHECK(std::ldexp(t.min_positive().convert_to<double>(), -t.q()) == r.min_positive);
  }
}

TEST_CASE("add, sub, mul, div: every operand pair of every small format, every policy") {
  for (const Format& f : small_formats()) {
    const std::uint64_t n = std::uint64_t{1} << f.width();
    for (const Policy& p : all_policies()) {
      const auto result = parallel_check(
          n * n, [&] { return reference::Table(f); },
          [&](reference::Table& table, std::uint64_t i, std::string& what) {
            reference::Arithmetic ref(table);
            ref.set_policy(p);
            const std::uint64_t a = i / n, b = i % n;
            return agrees(add(f, a, b, p), ref.add(a, b), "add", f, p, {a, b}, what) &&
                   agrees(sub(f, a, b, p), ref.sub(a, b), "sub", f, p, {a, b}, what) &&
                   agrees(mul(f, a, b, p), ref.mul(a, b), "mul", f, p, {a, b}, what) &&
                   agrees(div(f, a, b, p), ref.div(a, b), "div", f, p, {a, b}, what);
          });
      INFO(f.name, " ", policy_text(p));
      for (const auto& e : result.examples) INFO(e);
      CHECK_MESSAGE(result.count == 0, result.count, " mismatches; first: ",
                    result.examples.empty() ? "" : result.examples.front());
    }
  }
}

TEST_CASE("sqrt: every operand of every small format, every policy") {
  for (const Format& f : small_formats()) {
    reference::Table table(f);
    reference::Arithmetic ref(table);
    for (const Policy& p : all_policies()) {
      ref.set_policy(p);
      for (std::uint64_t a = 0; a < (std::uint64_t{1} << f.width()); ++a) {
        std::string what;
        CHECK_MESSAGE(agrees(sqrt(f, a, p), ref.sqrt(a), "sqrt", f, p, {a}, what), what);
      }
    }
  }
}

TEST_CASE("conversion between every pair of small formats and into fp16/bf16, every policy") {
  std::vector<Format> targets = small_formats();
  targets.push_back(formats::fp16);
  targets.push_back(formats::bf16);
  for (const Format& from : small_formats()) {
    const reference::Table source(from);
    for (const Format& to : targets) {
      reference::Table target(to);
      reference::Arithmetic ref(target);
      for (const Policy& p : all_policies()) {
        ref.set_policy(p);
        for (std::uint64_t a = 0; a < source.codes(); ++a) {
          if (source.value(a).cls == reference::Class::nan) continue;
          std::string what;
          CHECK_MESSAGE(agrees(convert_bits(a, from, to, p), ref.convert(source, a), "convert", to, p, {a}, what),
                        from.name, " -> ", what);
        }
      }
    }
  }
}

TEST_CASE("IEEE P3109 members: every operand pair of add, sub, mul, div and every sqrt, each saturation mode") {
  // Signed extended with P = 1 (no mantissa bits) and 3, unsigned extended
  // and signed finite; OvfInf, SatFinite and SatPropagate in rne, and
  // SatPropagate in rdn (its directed overflow to max and to infinity).
  const Policy policies[] = {Policy{}, Policy{.overflow = Overflow::sat}, Policy{.overflow = Overflow::satprop},
                             Policy{.rounding = Rounding::rdn, .overflow = Overflow::satprop}};
  for (const Format& f : {*p3109_format(1, true, true), *p3109_format(3, true, true), *p3109_format(5, false, true),
                          *p3109_format(6, true, false)}) {
    reference::Table table(f);
    reference::Arithmetic ref(table);
    for (const Policy& p : policies) {
      ref.set_policy(p);
      std::uint64_t mismatches = 0;
      std::string first;
      for (std::uint64_t a = 0; a < 256; ++a) {
        std::string what;
        if (!agrees(sqrt(f, a, p), ref.sqrt(a), "sqrt", f, p, {a}, what) && mismatches++ == 0) first = what;
        for (std::uint64_t b = 0; b < 256; ++b) {
          const bool ok = agrees(add(f, a, b, p), ref.add(a, b), "add", f, p, {a, b}, what) &&
                          agrees(sub(f, a, b, p), ref.sub(a, b), "sub", f, p, {a, b}, what) &&
                          agrees(mul(f, a, b, p), ref.mul(a, b), "mul", f, p, {a, b}, what) &&
                          agrees(div(f, a, b, p), ref.div(a, b), "div", f, p, {a, b}, what);
          if (!ok && mismatches++ == 0) first = what;
        }
      }
      CHECK_MESSAGE(mismatches == 0, mismatches, " mismatches; first: ", first);
    }
  }
}
