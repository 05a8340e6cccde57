// fp16 and bf16 in rne against the CPU. fp16: float arithmetic on the exact
// float operands, then one rounding by F16C (_mm_cvtps_ph): float has
// 24 >= 2*11+2 bits, so the double rounding is innocuous for +, -, *, / and
// fp16 results never reach float's subnormal range. bf16: double arithmetic
// (24 >= 2*8+2 easily; bf16 products reach 2^-266, below float's range), then
// one rounding to bf16 by std::nearbyint in the CPU's default
// round-to-nearest-even mode on the value scaled to the bf16 grid.
//
// The default build checks every 61st operand pair (70M per operation and
// format) of add, sub, mul and div; arith-half-cpu-all (label exhaustive)
// checks every pair of add and mul.
#include <doctest/doctest.h>

#include <bit>
#include <cfenv>
#include <cmath>
#include <vector>

#include "check.hpp"
#include "f16c.hpp"
#include "fmtcheck/core/decode.hpp"
#include "fmtcheck/core/unpacked.hpp"
#include "parallel.hpp"

using namespace fmtcheck;
using namespace fmtcheck::testing;

namespace {

enum class Op { add, sub, mul, div };

#ifdef FMTCHECK_HALF_ALL_PAIRS
constexpr std::uint64_t kStride = 1;
constexpr Op kOps[] = {Op::add, Op::mul};
#else
constexpr std::uint64_t kStride = 61;
constexpr Op kOps[] = {Op::add, Op::sub, Op::mul, Op::div};
#endif

// 2^e as a double, built from its bits (e in double's normal range).
double pow2(int e) { return std::bit_cast<double>(static_cast<std::uint64_t>(e + 1023) << 52); }

// Round a double to bf16 with the CPU's nearest-even: the value divided by the
// grid spacing of its binade is rounded to an integer by nearbyint (roundsd;
// exact power-of-two scaling), then checked against the range. x is zero or a
// normal double: bf16 operands give results of at least 2^-266 in magnitude.
__attribute__((target("sse4.1"))) std::uint16_t bf16_round(double x) {
  if (std::isnan(x)) return 0x7FC0;
  const bool negative = std::signbit(x);
  const std::uint16_t sign = negative ? 0x8000 : 0;
  const double a = std::fabs(x);
  if (std::isinf(a)) return sign | 0x7F80;
  const int binade = static_cast<int>(std::bit_cast<std::uint64_t>(a) >> 52) - 1023;
  const int e = std::max(binade, -126);  // subnormals share 2^-126's spacing
  const double r = std::nearbyint(a * pow2(7 - e)) * pow2(e - 7);
  if (r >= 0x1p128) return sign | 0x7F80;
  if (r == 0) return sign;
  const auto f = std::bit_cast<std::uint32_t>(static_cast<float>(r));  // exact: r is a bf16 value
  return sign | static_cast<std::uint16_t>(f >> 16);
}
double bf16_widen(std::uint16_t h) { return std::bit_cast<float>(static_cast<std::uint32_t>(h) << 16); }

// Every code of a 16-bit format through a function, once.
template <typename F>
auto table_of(F widen) {
  std::vector<decltype(widen(std::uint16_t{0}))> out(65536);
  for (std::uint32_t c = 0; c < 65536; ++c) out[c] = widen(static_cast<std::uint16_t>(c));
  return out;
}

// The library's add(f, a, b) is add(unpack(f, a), unpack(f, b), f); the sweep
// unpacks each code once (unpack is proven on every code by the oracle
// suites) and calls the Unpacked overloads. cpu(a, b) is the CPU's answer.
template <typename Cpu>
void sweep(const Format& f, Op op, Cpu cpu) {
  const std::uint64_t n = 65536;
  const auto decoded = table_of([&](std::uint16_t c) { return unpack(f, c); });
  const auto result = parallel_check(
      n * n / kStride, [] { return 0; },
      [&](int, std::uint64_t i, std::string& what) {
        const std::uint64_t t = i * kStride, a = t >> 16, b = t & 0xFFFF;
        const Unpacked& x = decoded[a];
        const Unpacked& y = decoded[b];
        const Conversion got = op == Op::add ? add(x, y, f)
                               : op == Op::sub ? sub(x, y, f)
                               : op == Op::mul ? mul(x, y, f)
                                               : div(x, y, f);
        const std::uint16_t want = cpu(static_cast<std::uint16_t>(a), static_cast<std::uint16_t>(b));
        if (got.bits == want) return true;
        // NaN payloads: x86 picks by operand order.
        if (classify(f, got.bits) == ValueClass::nan && classify(f, want) == ValueClass::nan) return true;
        what = f.name + " " + hex(a) + " " + hex(b) + ": got " + hex(got.bits) + ", cpu " + hex(want);
        return false;
      });
  CHECK_MESSAGE(result.count == 0, result.count, " mismatches; first: ",
                result.examples.empty() ? "" : result.examples.front());
}

template <typename T>
T apply(Op op, T x, T y) {
  switch (op) {
    case Op::add: return x + y;
    case Op::sub: return x - y;
    case Op::mul: return x * y;
    case Op::div: return x / y;
  }
  return 0;
}

}  // namespace

TEST_CASE("fp16 rne against float arithmetic plus F16C") {
  if (!cpu_has_f16c()) {
    MESSAGE("skipped: this CPU has no F16C, the independent fp16 rounding");
    return;
  }
  REQUIRE(std::fegetround() == FE_TONEAREST);
  const auto value = table_of(f16c_widen);
  for (Op op : kOps) {
    CAPTURE(static_cast<int>(op));
    sweep(formats::fp16, op, [&](std::uint16_t a, std::uint16_t b) {
      return f16c_round<_MM_FROUND_TO_NEAREST_INT>(apply(op, value[a], value[b]));
    });
  }
}

TEST_CASE("bf16 rne against double arithmetic plus nearbyint") {
  REQUIRE(std::fegetround() == FE_TONEAREST);
  const auto value = table_of(bf16_widen);
  for (Op op : kOps) {
    CAPTURE(static_cast<int>(op));
    sweep(formats::bf16, op, [&](std::uint16_t a, std::uint16_t b) {
      return bf16_round(apply(op, value[a], value[b]));
    });
  }
}
