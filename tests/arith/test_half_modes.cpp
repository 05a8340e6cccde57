// fp16 and bf16 under rtz, rup and rdn against the CPU: add, sub, mul, div
// and fma on random and boundary operands (operands.hpp), sqrt on every
// operand; the default policy otherwise (nosat, keep subnormals).
//
// The CPU's answer: the operation in double under fesetround(mode) (std::fma
// for fma), the double converted to float in the same mode, and the float
// rounded to the format in the same direction: by F16C (vcvtps2ph with the
// matching rounding immediate) for fp16; for bf16, whose codes are the top 16
// bits of floats, by dropping the low 16 bits (toward zero) and stepping the
// code one up in magnitude when bits were dropped and the direction is away
// from zero.
//
// Why three directed roundings equal one. Let G be a subset of H, both grids
// including +-inf, and RD_G(x) the largest point of G that is <= x. Put
// g = RD_G(x): g is in H and g <= x, so g <= RD_H(x) <= x; so g is the
// largest point of G that is <= RD_H(x), i.e. RD_G(RD_H(x)) = RD_G(x). The
// same holds for RU, and RZ is RD for x >= 0 and RU for x < 0 (the sign
// survives every step). fp16 and bf16 values are floats, and floats are
// doubles, over the whole range: subnormals (spacings 2^-24 and 2^-133 are
// multiples of 2^-149) and the maxima included. IEEE's directed overflow
// (to +-max toward zero, else to +-inf) is the directed rounding onto the
// grid with +-inf, and an exact zero's sign (x - x = -0 only under rdn)
// follows IEEE in the CPU as in the library. The library's arithmetic is
// integer-only, so running it in the same thread under the directed mode
// does not change it (if it did, this test would say so).
//
// 10^8 operations in all, a few seconds on two cores.
#include <doctest/doctest.h>

#include <bit>
#include <cfenv>
#include <cmath>
#include <cpuid.h>
#include <immintrin.h>
#include <vector>

#include "check.hpp"
#include "fmtcheck/decode.hpp"
#include "operands.hpp"
#include "parallel.hpp"

using namespace fmtcheck;
using namespace fmtcheck::testing;

namespace {

// Cases per format and mode; each checks add, sub, mul, div and fma, so
// 2 formats x 3 modes x 5 operations x kCases operations in all.
constexpr std::uint64_t kCases = 3'333'334;

struct Mode {
  Rounding rounding;
  int fenv;        // fesetround's mode
  int immediate;   // vcvtps2ph's rounding immediate
  const char* name;
};
constexpr Mode kModes[] = {{Rounding::rtz, FE_TOWARDZERO, _MM_FROUND_TO_ZERO, "rtz"},
                           {Rounding::rup, FE_UPWARD, _MM_FROUND_TO_POS_INF, "rup"},
                           {Rounding::rdn, FE_DOWNWARD, _MM_FROUND_TO_NEG_INF, "rdn"}};

bool cpu_has_f16c() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) != 0;
}

__attribute__((target("f16c"))) double fp16_widen(std::uint16_t h) {
  return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(h)));
}
double bf16_widen(std::uint16_t h) { return std::bit_cast<float>(static_cast<std::uint32_t>(h) << 16); }

// The float rounded to fp16 by F16C in the mode's direction (the immediate
// must be a constant, hence the switch).
__attribute__((target("f16c"))) std::uint16_t fp16_round(float x, const Mode& m) {
  const __m128 v = _mm_set_ss(x);
  switch (m.immediate) {
    case _MM_FROUND_TO_ZERO: return static_cast<std::uint16_t>(_mm_extract_epi16(_mm_cvtps_ph(v, _MM_FROUND_TO_ZERO), 0));
    case _MM_FROUND_TO_POS_INF: return static_cast<std::uint16_t>(_mm_extract_epi16(_mm_cvtps_ph(v, _MM_FROUND_TO_POS_INF), 0));
    default: return static_cast<std::uint16_t>(_mm_extract_epi16(_mm_cvtps_ph(v, _MM_FROUND_TO_NEG_INF), 0));
  }
}

// The float rounded to bf16 in the mode's direction (not for NaN).
std::uint16_t bf16_round(float x, const Mode& m) {
  const auto u = std::bit_cast<std::uint32_t>(x);
  const bool negative = (u >> 31) != 0;
  const bool dropped = (u & 0xFFFF) != 0;
  const bool away = m.rounding == Rounding::rup ? !negative : m.rounding == Rounding::rdn && negative;
  // One code up in magnitude is the next value away from zero (max + 1 is inf).
  return static_cast<std::uint16_t>((u >> 16) + (dropped && away ? 1 : 0));
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

// Whether the library's bits are the CPU's, NaN matching any NaN (payload
// rules are proven against the Boost reference and the conversion oracles).
bool same(const Format& f, std::uint64_t got, std::uint64_t want) {
  return got == want || (classify(f, got) == ValueClass::nan && classify(f, want) == ValueClass::nan);
}

// round(x) is the CPU's rounding of a float to the format in the mode.
template <typename Round>
void check_format(const Format& f, double (*widen)(std::uint16_t), Round round, std::uint64_t seed) {
  std::vector<double> value(65536);
  for (std::uint32_t c = 0; c < 65536; ++c) value[c] = widen(static_cast<std::uint16_t>(c));
  const Operands ops(f);
  for (const Mode& m : kModes) {
    CAPTURE(m.name);
    const Policy p{.rounding = m.rounding};
    // The CPU's answer; the caller's thread is in the mode. The volatile
    // keeps the compiler from folding the double-to-float conversion.
    const auto cpu = [&](double exact_in_double) {
      const volatile float narrowed = static_cast<float>(exact_in_double);
      return round(narrowed, m);
    };
    const auto in_mode = [&] { return std::fesetround(m.fenv); };
    auto result = parallel_check(kCases, in_mode, [&](int, std::uint64_t i, std::string& what) {
      const std::uint64_t a = ops.pick(seed, i, 0), b = ops.pick(seed, i, 1), c = ops.pick(seed, i, 2);
      for (Op op : kOps) {
        const std::uint64_t got = library_apply(op, f, a, b, c, p).bits;
        const std::uint16_t want = cpu(cpu_apply(op, value[a], value[b], value[c]));
        if (same(f, got, want)) continue;
        what = f.name + " " + m.name + " op " + std::to_string(static_cast<int>(op)) + " " + hex(a) + " " + hex(b) +
               " " + hex(c) + ": got " + hex(got) + ", cpu " + hex(want);
        return false;
      }
      return true;
    });
    CHECK_MESSAGE(result.count == 0, result.count, " mismatches; first: ",
                  result.examples.empty() ? "" : result.examples.front());
    result = parallel_check(65536, in_mode, [&](int, std::uint64_t a, std::string& what) {
      const std::uint64_t got = sqrt(f, a, p).bits;
      const std::uint16_t want = cpu(std::sqrt(value[a]));
      if (same(f, got, want)) return true;
      what = f.name + " " + m.name + " sqrt " + hex(a) + ": got " + hex(got) + ", cpu " + hex(want);
      return false;
    });
    CHECK_MESSAGE(result.count == 0, result.count, " sqrt mismatches; first: ",
                  result.examples.empty() ? "" : result.examples.front());
    ++seed;
  }
}

}  // namespace

TEST_CASE("fp16 rtz/rup/rdn against double arithmetic plus F16C in the same direction") {
  if (!cpu_has_f16c()) {
    MESSAGE("skipped: this CPU has no F16C, the independent fp16 rounding");
    return;
  }
  check_format(formats::fp16, fp16_widen, fp16_round, 100);
}

TEST_CASE("bf16 rtz/rup/rdn against double arithmetic plus directed truncation") {
  check_format(formats::bf16, bf16_widen, bf16_round, 200);
}
