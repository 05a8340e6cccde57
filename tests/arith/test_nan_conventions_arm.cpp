// --nan arm (FPCR.DN = 0) and --nan arm-dn (FPCR.DN = 1) against an AArch64
// implementation: QEMU's user-mode emulator running tests/data/arm/
// arm_nan_probe.c, whose output is committed as arm_nan_qemu.csv (its
// regenerate.sh rebuilds it; CI needs no QEMU). Every row is checked: the
// conversions float32 -> fp16 and bfloat16 (BFCVT), fp16 -> float32 (every
// fp16 NaN code), float32 <-> float64, and add, sub, mul, div, fma and sqrt
// in float32 and fp16 on quiet and signaling NaNs of both signs, infinities,
// zeros and numbers; the result bits and the invalid-operation flag
// (FPSR.IOC).
#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "fmtcheck/arith/arithmetic.hpp"
#include "fmtcheck/core/convert.hpp"

using namespace fmtcheck;

namespace {

struct Row {
  std::string op;
  bool dn = false;
  std::array<std::uint64_t, 3> in{};
  std::uint64_t result = 0;
  bool invalid = false;
};

std::vector<Row> read_rows(const std::string& path) {
  std::ifstream file(path);
  REQUIRE_MESSAGE(file.good(), "cannot read " << path);
  std::vector<Row> rows;
  std::string line;
  bool header = false;
  while (std::getline(file, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (!header) {
      REQUIRE(line == "op,dn,a,b,c,result,invalid");
      header = true;
      continue;
    }
    std::vector<std::string> field;
    std::stringstream ss(line);
    for (std::string f; std::getline(ss, f, ',');) field.push_back(f);
    REQUIRE_MESSAGE(field.size() == 7, "bad row: " << line);
    Row r{.op = field[0], .dn = field[1] == "1"};
    for (int i = 0; i < 3; ++i) r.in[i] = field[2 + i] == "-" ? 0 : std::stoull(field[2 + i], nullptr, 16);
    r.result = std::stoull(field[5], nullptr, 16);
    r.invalid = field[6] == "1";
    rows.push_back(r);
  }
  return rows;
}

Conversion fmtcheck_result(const Row& r) {
  const Policy p{.nan = r.dn ? NanConvention::canonical : NanConvention::arm};
  const auto& [a, b, c] = r.in;
  if (r.op == "cvt_f32_f16") return convert_bits(a, formats::fp32, formats::fp16, p);
  if (r.op == "cvt_f32_bf16") return convert_bits(a, formats::fp32, formats::bf16, p);
  if (r.op == "cvt_f16_f32") return convert_bits(a, formats::fp16, formats::fp32, p);
  if (r.op == "cvt_f32_f64") return convert_bits(a, formats::fp32, formats::fp64, p);
  if (r.op == "cvt_f64_f32") return convert_bits(a, formats::fp64, formats::fp32, p);
  for (const Format* f : {&formats::fp32, &formats::fp16}) {
    const std::string suffix = f == &formats::fp32 ? "_f32" : "_f16";
    if (r.op == "add" + suffix) return add(*f, a, b, p);
    if (r.op == "sub" + suffix) return sub(*f, a, b, p);
    if (r.op == "mul" + suffix) return mul(*f, a, b, p);
    if (r.op == "div" + suffix) return div(*f, a, b, p);
    if (r.op == "fma" + suffix) return fma(*f, a, b, c, p);
    if (r.op == "sqrt" + suffix) return sqrt(*f, a, p);
  }
  FAIL("unknown operation " << r.op);
  return {};
}

}  // namespace

TEST_CASE("arm and arm-dn: every row QEMU's AArch64 gave") {
  const std::vector<Row> rows = read_rows(FMTCHECK_ARM_NAN_DATA);
  std::map<std::string, int> per_op;
  int bit_mismatches = 0;
  int flag_mismatches = 0;
  for (const Row& r : rows) {
    const Conversion got = fmtcheck_result(r);
    ++per_op[r.op + (r.dn ? " dn=1" : " dn=0")];
    const bool bits_ok = got.bits == r.result;
    const bool flag_ok = got.flags.has(Flag::invalid) == r.invalid;
    bit_mismatches += bits_ok ? 0 : 1;
    flag_mismatches += flag_ok ? 0 : 1;
    if ((!bits_ok || !flag_ok) && bit_mismatches + flag_mismatches <= 12) {
      std::ostringstream what;
      what << r.op << " dn=" << r.dn << std::hex << " operands " << r.in[0] << " " << r.in[1] << " " << r.in[2]
           << ": fmtcheck " << got.bits << " invalid=" << got.flags.has(Flag::invalid) << ", QEMU " << r.result
           << " invalid=" << r.invalid;
      FAIL_CHECK(what.str());
    }
  }
  CHECK(bit_mismatches == 0);
  CHECK(flag_mismatches == 0);
  // The whole file was read: 17 operations under both DN settings.
  CHECK(rows.size() == 16434);
  CHECK(per_op.size() == 34);
  CHECK(per_op["cvt_f16_f32 dn=0"] == 2 * 1023 + 9);
  CHECK(per_op["fma_f32 dn=1"] == 12 * 12 * 12);
}

TEST_CASE("the QEMU data tells arm from arm-dn and from x86") {
  // Guards the data itself: a probe whose FPCR write had no effect, or that
  // ran on the x86 convention, would fail here rather than prove nothing.
  const std::vector<Row> rows = read_rows(FMTCHECK_ARM_NAN_DATA);
  int payload_kept = 0;
  int dn_default = 0;
  for (const Row& r : rows) {
    if (r.op != "cvt_f32_f16" || r.in[0] != 0xFFC00001u) continue;
    (r.dn ? dn_default : payload_kept) += r.result == (r.dn ? 0x7E00u : 0xFE00u) ? 1 : 0;
  }
  CHECK(payload_kept == 1);
  CHECK(dn_default == 1);
  // x86 keeps the first NaN operand; AArch64 takes the signaling one.
  bool signaling_first = false;
  for (const Row& r : rows) {
    if (r.op == "add_f16" && !r.dn && r.in[0] == 0x7E09 && r.in[1] == 0x7C01) signaling_first = r.result == 0x7E01;
  }
  CHECK(signaling_first);
}
