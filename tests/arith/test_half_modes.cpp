// fp16 and bf16 in rtz, rup, rdn, rne, rna, rto and sr (8 random bits, drawn
// per case) against the CPU, bits and the inexact flag: add, sub, mul, div
// and fma on random and boundary operands (operands.hpp), sqrt on every
// operand; the default policy otherwise (nosat, keep subnormals).
// 1.17 x 10^8 operations in all, seconds on two cores.
//
// The CPU's answer, bits and inexact flag: the operation in double, the
// double converted to float, and the float rounded to the format. fp16's last step is F16C (vcvtps2ph,
// its rounding immediate); bf16's codes are the top 16 bits of floats, so its
// last step keeps the top half of the float, adjusted by the rounding's rule
// on the low half.
//
// rtz, rup, rdn: every step rounds in the mode's direction (fesetround, the
// immediate, or a step of one code away from zero when bits were dropped).
// Directed roundings onto nested grids compose. Let G be a subset of H, both
// grids including +-inf, and RD_G(x) the largest point of G that is <= x.
// Put g = RD_G(x): g is in H and g <= x, so g <= RD_H(x) <= x; so g is the
// largest point of G that is <= RD_H(x), i.e. RD_G(RD_H(x)) = RD_G(x). The
// same holds for RU, and RZ is RD for x >= 0 and RU for x < 0. fp16 and bf16
// values are floats and floats are doubles over the whole range (subnormal
// spacings 2^-24 and 2^-133 are multiples of 2^-149; the maxima included).
// IEEE's directed overflow (to +-max toward zero, else to +-inf) is directed
// rounding onto the grid with +-inf, and an exact zero's sign (x - x = -0
// only under rdn) follows IEEE in the CPU as in the library.
//
// rne, rna, rto: the double and float steps round to odd (toward zero, then
// the low bit set when the CPU's inexact flag says bits were lost: Boldo and
// Melquiond's emulation), and only the last step rounds as asked. If H has at
// least two more bits than G everywhere (its points include G's points and
// G's midpoints as even points), RO_H(x) lies in the same open interval
// between neighbouring G-points and G-midpoints as x, or is x itself, and
// every nearest or odd rounding to G is constant on such an interval; so
// RN_G(RO_H(x)) = RN_G(x) for both tie rules and RO_G(RO_H(x)) = RO_G(x).
// Float has 13 more bits than fp16 (fp16 lies in float's normal range) and
// 16 more than bf16 (subnormals included); beyond G's max, x above the
// midpoint max + ulp/2 stays above it (float's max and the saturating
// toward-zero overflow are above both midpoints).
//
// sr: the double and float steps round toward zero, which keeps the bits of x
// below the format's last place exact down to 2^-8 of it (nesting again, as
// float has 13 and 16 more bits than fp16 and bf16); the last step adds the
// random bits to those 8 bits. Only bf16's 2^128 (max plus its last place) is
// not a float: from there the answer is inf, said before the float step.
//
// The inexact flag is read
// from MXCSR around volatile accesses so that the compiler cannot move the
// arithmetic across the read.
//
// The library's arithmetic is integer-only, so running it in the same thread
// under another rounding mode does not change it (if it did, this test would
// say so).
#include <doctest/doctest.h>

#include <bit>
#include <cfenv>
#include <cmath>
#include <immintrin.h>
#include <xmmintrin.h>
#include <vector>

#include "check.hpp"
#include "f16c.hpp"
#include "fmtcheck/core/decode.hpp"
#include "operands.hpp"
#include "parallel.hpp"

using namespace fmtcheck;
using namespace fmtcheck::testing;

namespace {

// Cases per format and mode; each checks add, sub, mul, div and fma, so
// 2 formats x 7 modes x 5 operations x kCases = 1.17 x 10^8 operations.
constexpr std::uint64_t kCases = 1'666'667;

struct Mode {
  Rounding rounding;
  int fenv;  // fesetround's mode for the double and float steps
  const char* name;
};
constexpr Mode kModes[] = {{Rounding::rtz, FE_TOWARDZERO, "rtz"}, {Rounding::rup, FE_UPWARD, "rup"},
                           {Rounding::rdn, FE_DOWNWARD, "rdn"},   {Rounding::rne, FE_TOWARDZERO, "rne"},
                           {Rounding::rna, FE_TOWARDZERO, "rna"}, {Rounding::rto, FE_TOWARDZERO, "rto"},
                           {Rounding::sr, FE_TOWARDZERO, "sr"}};
// The modes whose double and float steps round to odd (the others round
// in the thread's direction).
bool to_odd(Rounding r) { return r == Rounding::rne || r == Rounding::rna || r == Rounding::rto; }
// sr's random bits, drawn per case; below fp16's and bf16's last place float
// has 13 and 16 bits, more than these 8.
constexpr int kRandomBits = 8;

constexpr unsigned kInexact = 0x20;  // MXCSR's precision flag

// The value op() computes in the thread's rounding mode, rounded to odd when
// `odd`: its low bit set when the operation was inexact. Sets `inexact` when
// the step was.
template <typename Op>
auto rounded(bool odd, Op op, bool& inexact) {
  _mm_setcsr(_mm_getcsr() & ~kInexact);
  const volatile auto r = op();
  const bool lost = (_mm_getcsr() & kInexact) != 0;
  inexact = inexact || lost;
  auto bits = std::bit_cast<std::conditional_t<sizeof r == 8, std::uint64_t, std::uint32_t>>(r);
  if (odd && lost) bits |= 1;
  return std::bit_cast<std::remove_cv_t<decltype(r)>>(bits);
}

double fp16_widen(std::uint16_t h) { return f16c_widen(h); }
double bf16_widen(std::uint16_t h) { return std::bit_cast<float>(static_cast<std::uint32_t>(h) << 16); }

// Whether x lies exactly halfway between two fp16 neighbours: its bits below
// fp16's last place (2^(e-10), or 2^-24 below fp16's normal range) are 10...0.
bool fp16_tie(float x) {
  const auto u = std::bit_cast<std::uint32_t>(x);
  const int e = static_cast<int>((u >> 23) & 0xFF) - 127;
  if (e < -25) return false;  // below half the smallest subnormal (x is a normal float here)
  const int dropped = std::max(e - 10, -24) - (e - 23);
  const std::uint32_t significand = (u & 0x7FFFFF) | 0x800000;
  return (significand & ((std::uint32_t{1} << dropped) - 1)) == std::uint32_t{1} << (dropped - 1);
}

// The float rounded to fp16 in the mode (rto reads the inexact flag of the
// toward-zero conversion; rna breaks F16C's ties away from zero; sr adds the
// random bits to the 8 bits below the last place of x, which the toward-zero
// steps kept exact).
std::uint16_t fp16_rounding(float x, const Mode& m, std::uint32_t random) {
  switch (m.rounding) {
    case Rounding::rtz: return f16c_round<_MM_FROUND_TO_ZERO>(x);
    case Rounding::rup: return f16c_round<_MM_FROUND_TO_POS_INF>(x);
    case Rounding::rdn: return f16c_round<_MM_FROUND_TO_NEG_INF>(x);
    case Rounding::rto: {
      _mm_setcsr(_mm_getcsr() & ~kInexact);
      const volatile float v = x;
      const std::uint16_t toward_zero = f16c_round<_MM_FROUND_TO_ZERO>(v);
      return toward_zero | ((_mm_getcsr() & kInexact) != 0 ? 1 : 0);
    }
    case Rounding::rna:
      if (fp16_tie(x)) return f16c_round<_MM_FROUND_TO_ZERO>(x) + 1;  // one code up in magnitude (max + 1 is inf)
      return f16c_round<_MM_FROUND_TO_NEAREST_INT>(x);
    case Rounding::sr: {
      const std::uint16_t low = f16c_round<_MM_FROUND_TO_ZERO>(x);
      const float low_value = f16c_widen(low);
      // The last place at low, signed like x; past max it is max's (2^5).
      const bool at_max = (low & 0x7FFF) == 0x7BFF;
      const float ulp = at_max ? std::copysign(32.0f, x) : f16c_widen(low + 1) - low_value;
      const float below = std::floor((x - low_value) / ulp * (1 << kRandomBits));  // exact: Sterbenz, powers of 2
      return low + (below + static_cast<float>(random) >= (1 << kRandomBits) ? 1 : 0);
    }
    default: return f16c_round<_MM_FROUND_TO_NEAREST_INT>(x);
  }
}

// The same, setting `inexact` from F16C's inexact flag.
std::uint16_t fp16_round(float x, const Mode& m, std::uint32_t random, bool& inexact) {
  _mm_setcsr(_mm_getcsr() & ~kInexact);
  const volatile std::uint16_t bits = fp16_rounding(x, m, random);
  inexact = inexact || (_mm_getcsr() & kInexact) != 0;
  return bits;
}

// The float rounded to bf16 in the mode (not for NaN); a carry out of the
// low half steps the code one up in magnitude, from max to inf. Inexact when
// the low half is not zero. sr adds the random bits to the low half's top 8.
std::uint16_t bf16_round(float x, const Mode& m, std::uint32_t random, bool& inexact) {
  const auto u = std::bit_cast<std::uint32_t>(x);
  const bool negative = (u >> 31) != 0;
  const std::uint32_t low = u & 0xFFFF;
  inexact = inexact || low != 0;
  switch (m.rounding) {
    case Rounding::rtz: return static_cast<std::uint16_t>(u >> 16);
    case Rounding::rup: return static_cast<std::uint16_t>((u >> 16) + (low != 0 && !negative ? 1 : 0));
    case Rounding::rdn: return static_cast<std::uint16_t>((u >> 16) + (low != 0 && negative ? 1 : 0));
    case Rounding::rna: return static_cast<std::uint16_t>((u + 0x8000) >> 16);
    case Rounding::rto: return static_cast<std::uint16_t>((u >> 16) | (low != 0 ? 1 : 0));
    case Rounding::sr:
      return static_cast<std::uint16_t>((u >> 16) + ((low >> (16 - kRandomBits)) + random >= (1u << kRandomBits) ? 1 : 0));
    default: return static_cast<std::uint16_t>((u + 0x7FFF + ((u >> 16) & 1)) >> 16);  // rne
  }
}

enum class Op { add, sub, mul, div, fma };
constexpr Op kOps[] = {Op::add, Op::sub, Op::mul, Op::div, Op::fma};

double cpu_apply(Op op, double a, double b, double c) {
  switch (op) {
    case Op::add: return a + b;
    case Op::sub: return a - b;
    case Op::mul: return a * b;
    case Op::div: return a / b;
    case Op::fma: return std::fma(a, b, c);
  }
  return 0;
}

Conversion library_apply(Op op, const Format& f, std::uint64_t a, std::uint64_t b, std::uint64_t c, const Policy& p) {
  switch (op) {
    case Op::add: return add(f, a, b, p);
    case Op::sub: return sub(f, a, b, p);
    case Op::mul: return mul(f, a, b, p);
    case Op::div: return div(f, a, b, p);
    case Op::fma: return fma(f, a, b, c, p);
  }
  return {};
}

// Whether the library's result is the CPU's: the bits, and the inexact flag
// (any step of the CPU's chain inexact: the exact value is a point of the
// format exactly when every step is exact). A NaN matches any NaN (payload
// rules are proven against the Boost reference and the conversion oracles).
bool same(const Format& f, const Conversion& got, std::uint16_t want, bool inexact) {
  if (classify(f, got.bits) == ValueClass::nan) return classify(f, want) == ValueClass::nan;
  return got.bits == want && got.flags.has(Flag::inexact) == inexact;
}

// round(x, m, random, inexact) is the CPU's rounding of a float to the format.
template <typename Round>
void check_format(const Format& f, double (*widen)(std::uint16_t), Round round, std::uint64_t seed) {
  std::vector<double> value(65536);
  for (std::uint32_t c = 0; c < 65536; ++c) value[c] = widen(static_cast<std::uint16_t>(c));
  const Operands ops(f);
  for (const Mode& m : kModes) {
    CAPTURE(m.name);
    // The policy of case i (sr's random bits vary from case to case).
    const auto policy = [&](std::uint64_t i) {
      return Policy{.rounding = m.rounding,
                    .random_bits = static_cast<std::uint32_t>(mix((seed << 40) ^ (i << 2) ^ 3)) & 0xFF,
                    .random_bit_count = kRandomBits};
    };
    // The CPU's answer from the double step's result; the caller's thread
    // is in the mode.
    const bool odd = to_odd(m.rounding);
    const auto cpu = [&](double wide, const Policy& p, bool& inexact) -> std::uint16_t {
      // From 2^128 (bf16's max plus its last place, beyond float) sr rounds
      // away from zero whatever the random bits, but the toward-zero float
      // step would stop at float's max and lose that.
      if (m.rounding == Rounding::sr && std::isfinite(wide) && std::fabs(wide) >= 0x1p128) {
        inexact = true;
        return static_cast<std::uint16_t>(f.infinity_code() | (std::signbit(wide) ? f.sign_bit() : 0));
      }
      const volatile double v = wide;
      return round(rounded(odd, [&] { return static_cast<float>(v); }, inexact), m, p.random_bits, inexact);
    };
    const auto in_mode = [&] { return std::fesetround(m.fenv); };
    auto result = parallel_check(kCases, in_mode, [&](int, std::uint64_t i, std::string& what) {
      const std::uint64_t a = ops.pick(seed, i, 0), b = ops.pick(seed, i, 1), c = ops.pick(seed, i, 2);
      const Policy p = policy(i);
      for (Op op : kOps) {
        const Conversion got = library_apply(op, f, a, b, c, p);
        const volatile double x = value[a], y = value[b], z = value[c];
        bool inexact = false;
        const std::uint16_t want = cpu(rounded(odd, [&] { return cpu_apply(op, x, y, z); }, inexact), p, inexact);
        if (same(f, got, want, inexact)) continue;
        what = f.name + " " + m.name + " op " + std::to_string(static_cast<int>(op)) + " " + hex(a) + " " + hex(b) +
               " " + hex(c) + ": got " + hex(got.bits) + " " + describe(got.flags) + ", cpu " + hex(want) +
               (inexact ? " inexact" : "");
        return false;
      }
      return true;
    });
    CHECK_MESSAGE(result.count == 0, result.count, " mismatches; first: ",
                  result.examples.empty() ? "" : result.examples.front());
    result = parallel_check(65536, in_mode, [&](int, std::uint64_t a, std::string& what) {
      const Policy p = policy(a);
      const Conversion got = sqrt(f, a, p);
      const volatile double x = value[a];
      bool inexact = false;
      const std::uint16_t want = cpu(rounded(odd, [&] { return std::sqrt(x); }, inexact), p, inexact);
      if (same(f, got, want, inexact)) return true;
      what = f.name + " " + m.name + " sqrt " + hex(a) + ": got " + hex(got.bits) + ", cpu " + hex(want);
      return false;
    });
    CHECK_MESSAGE(result.count == 0, result.count, " sqrt mismatches; first: ",
                  result.examples.empty() ? "" : result.examples.front());
    ++seed;
  }
}

}  // namespace

TEST_CASE("fp16 in six rounding modes against double arithmetic plus F16C") {
  if (!cpu_has_f16c()) {
    MESSAGE("skipped: this CPU has no F16C, the independent fp16 rounding");
    return;
  }
  check_format(formats::fp16, fp16_widen, fp16_round, 100);
}

TEST_CASE("bf16 in six rounding modes against double arithmetic plus rounding of the float's low half") {
  check_format(formats::bf16, bf16_widen, bf16_round, 200);
}
