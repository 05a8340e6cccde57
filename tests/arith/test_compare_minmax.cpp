// compare, minimum and maximum against the C library on the decoded values:
// C's comparison operators for the order, and C23's fminimum / fmaximum
// (glibc), which are IEEE 754-2019 minimum / maximum: a NaN operand gives NaN
// and -0 < +0. Values are decoded by the Boost reference (reference.hpp),
// never by the library. Every operand pair of every 8-bit and narrower format
// and every 257th fp16 pair, under keep/daz/ftz+daz and each NaN convention;
// a NaN result must be the convention's NaN for the first NaN operand.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <math.h>  // fminimum, fmaximum: glibc 2.35+, C23

#include "check.hpp"
#include "parallel.hpp"

using namespace fmtcheck;
using namespace fmtcheck::testing;

namespace {

std::vector<Policy> compare_policies() {
  std::vector<Policy> out;
  for (Subnormals s : {Subnormals::keep, Subnormals::daz, Subnormals::ftz_daz}) {
    for (NanConvention c : {NanConvention::ieee, NanConvention::cuda, NanConvention::canonical}) {
      out.push_back({.subnormals = s, .nan = c});
    }
  }
  return out;
}

struct Decoded {
  double value = 0;  // exact; for daz, subnormals are zeros of their sign
  bool nan = false;
  bool signaling = false;
  bool flushed = false;
};

Decoded decode(const reference::Table& t, std::uint64_t code, const Policy& p) {
  const reference::Value& v = t.value(code);
  Decoded d;
  d.nan = v.cls == reference::Class::nan;
  d.signaling = v.signaling;
  if (v.cls == reference::Class::inf) d.value = HUGE_VAL;
  if (v.cls == reference::Class::finite) d.value = std::ldexp(static_cast<double>(v.magnitude), -t.q());
  d.flushed = v.subnormal && p.flush_inputs();
  if (d.flushed) d.value = 0;
  if (v.sign) d.value = -d.value;
  return d;
}

// The NaN a NaN operand becomes under each convention (docs/formats.md):
// ieee keeps sign and payload, quiet; cuda gives the positive all-ones code;
// canonical the positive code with only the quiet bit. fn formats have one
// NaN per sign, fnuz one NaN.
std::uint64_t expected_nan(const reference::Table& t, NanConvention c, std::uint64_t code) {
  const Format& f = t.format();
  const bool sign = t.sign_of(code);
  const std::uint64_t mantissa = code & ((std::uint64_t{1} << f.mantissa_bits) - 1);
  if (c == NanConvention::ieee) return t.nan(sign, mantissa).bits;
  if (f.specials == Specials::fnuz) return f.sign_bit();
  if (c == NanConvention::cuda || f.specials == Specials::fn) return f.magnitude_mask();
  return f.infinity_code() | (std::uint64_t{1} << (f.mantissa_bits - 1));  // canonical
}

std::string describe_pair(const Format& f, const Policy& p, std::uint64_t a, std::uint64_t b) {
  return f.name + " [" + policy_text(p) + "] " + hex(a) + " " + hex(b);
}

// Checks compare (both kinds), minimum and maximum on one pair.
bool check_pair(const reference::Table& t, const Policy& p, std::uint64_t a, std::uint64_t b, std::string& what) {
  const Format& f = t.format();
  const Decoded x = decode(t, a, p), y = decode(t, b, p);
  const Flags flushed = (x.flushed || y.flushed) ? Flags(Flag::flushed) : Flags();
  const bool any_nan = x.nan || y.nan;
  const bool signaling = (x.nan && x.signaling) || (y.nan && y.signaling);

  const std::partial_ordering order = any_nan         ? std::partial_ordering::unordered
                                      : x.value < y.value ? std::partial_ordering::less
                                      : x.value == y.value ? std::partial_ordering::equivalent
                                                           : std::partial_ordering::greater;
  for (CompareKind kind : {CompareKind::quiet, CompareKind::signaling}) {
    const Comparison got = compare(f, a, b, p, kind);
    const bool invalid = signaling || (any_nan && kind == CompareKind::signaling);
    const Flags want = flushed | (invalid ? Flags(Flag::invalid) : Flags());
    if (got.order != order || got.flags != want) {
      what = "compare " + describe_pair(f, p, a, b) + ": got flags " + describe(got.flags) + ", want " + describe(want);
      return false;
    }
  }

  for (bool is_min : {true, false}) {
    const Conversion got = is_min ? minimum(f, a, b, p) : maximum(f, a, b, p);
    const Flags want_flags = flushed | (signaling ? Flags(Flag::invalid) : Flags());
    bool ok = got.flags == want_flags;
    if (any_nan) {
      ok = ok && got.bits == expected_nan(t, p.nan, x.nan ? a : b);
    } else {
      double want = is_min ? ::fminimum(x.value, y.value) : ::fmaximum(x.value, y.value);
      if (want == 0 && !f.has_negative_zero()) want = 0;  // fnuz: a flushed -subnormal is its only zero
      const double value = decode(t, got.bits, Policy{}).value;
      ok = ok && std::bit_cast<std::uint64_t>(value) == std::bit_cast<std::uint64_t>(want);
    }
    if (!ok) {
      what = std::string(is_min ? "minimum " : "maximum ") + describe_pair(f, p, a, b) + ": got " + hex(got.bits) +
             " " + describe(got.flags);
      return false;
    }
  }
  return true;
}

void report(const Mismatches& m) {
  CHECK_MESSAGE(m.count == 0, m.count, " mismatches; first: ", m.examples.empty() ? "" : m.examples.front());
}

}  // namespace

TEST_CASE("compare, minimum, maximum: every pair of every 8-bit and narrower format") {
  for (const Format& f : small_formats()) {
    const reference::Table t(f);
    const std::uint64_t n = t.codes();
    for (const Policy& p : compare_policies()) {
      report(parallel_check(n * n, [] { return 0; }, [&](int, std::uint64_t i, std::string& what) {
        return check_pair(t, p, i / n, i % n, what);
      }));
    }
  }
}

TEST_CASE("compare, minimum, maximum: every 257th fp16 pair, policies in turn") {
  const reference::Table t(formats::fp16);
  const auto policies = compare_policies();
  constexpr std::uint64_t kStride = 257;  // prime: every code meets many partners
  const auto check = [&](int, std::uint64_t i, std::string& what) {
    const std::uint64_t pair = i * kStride;
    return check_pair(t, policies[i % policies.size()], pair >> 16, pair & 0xFFFF, what);
  };
  report(parallel_check((std::uint64_t{1} << 32) / kStride, [] { return 0; }, check));
}
