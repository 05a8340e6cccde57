// The host API rejects bad arguments before it touches a device, so these
// run (and must throw std::invalid_argument) on machines without a GPU.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "fmtcheck/cuda/convert.hpp"
#include "fmtcheck/cuda/emulated_convert.hpp"
#include "fmtcheck/cuda/mma.hpp"

using namespace fmtcheck;
using namespace fmtcheck::cuda;

namespace {

MmaTiles zero_tiles(const MmaInstruction& ins, std::size_t count) {
  MmaTiles t;
  t.count = count;
  t.a.assign(count * ins.m() * ins.k(), 0);
  t.b.assign(count * 8 * ins.k(), 0);
  t.c.assign(count * ins.m() * 8, 0);
  return t;
}

}  // namespace

TEST_CASE("the conversions the ISA has, and no others") {
  CHECK(find_device_conversion(formats::fp16, Rounding::rdn) != nullptr);
  CHECK(find_device_conversion(formats::tf32, Rounding::rna)->min_compute_capability == 80);
  CHECK(find_device_conversion(formats::tf32, Rounding::rtz)->min_compute_capability == 90);
  CHECK(find_device_conversion(formats::e4m3, Rounding::rne)->min_compute_capability == 89);
  // Hardware fp8 cvt rounds to nearest only, and there is no fp32 -> e2m1 cvt before Blackwell.
  CHECK(find_device_conversion(formats::e4m3, Rounding::rtz) == nullptr);
  CHECK(find_device_conversion(formats::e2m1, Rounding::rne) == nullptr);
  CHECK(find_device_conversion(formats::fp16, Rounding::sr) == nullptr);
}

TEST_CASE("each conversion's emulator policy: satfinite for fp8, IEEE overflow otherwise, NVIDIA NaNs") {
  for (const DeviceConversion& c : device_conversions()) {
    CAPTURE(c.ptx);
    const Policy p = c.policy();
    CHECK(p.rounding == c.rounding);
    CHECK(p.nan == NanConvention::cuda);
    const bool satfinite = std::string_view(c.ptx).find("satfinite") != std::string_view::npos;
    CHECK((p.overflow == Overflow::sat) == satfinite);
  }
}

TEST_CASE("widen_on_device rejects formats and bits it has no cvt for") {
  const std::uint32_t fp16_bits[] = {0x3C00, 0x10000};
  CHECK_THROWS_AS(widen_on_device(formats::fp16, fp16_bits), std::invalid_argument);
  const std::uint32_t tf32_bits[] = {0x3F800001};  // low 13 bits must be zero
  CHECK_THROWS_AS(widen_on_device(formats::tf32, tf32_bits), std::invalid_argument);
  CHECK_THROWS_AS(widen_on_device(formats::e2m1, {}), std::invalid_argument);
}

TEST_CASE("the mma.sync instructions and their shapes") {
  CHECK(find_mma_instruction(formats::fp16, formats::fp16)->k() == 16);
  CHECK(find_mma_instruction(formats::tf32, formats::fp32)->k() == 8);
  CHECK(find_mma_instruction(formats::e5m2, formats::fp16)->k() == 32);
  // The ISA has no bf16 or tf32 mma with an fp16 accumulator.
  CHECK(find_mma_instruction(formats::bf16, formats::fp16) == nullptr);
  CHECK(find_mma_instruction(formats::tf32, formats::fp16) == nullptr);
}

TEST_CASE("the wgmma instructions: the smallest shape per type, fp16 accumulators for fp16 and fp8 only") {
  using F = MmaFamily;
  for (const Format* in : {&formats::fp16, &formats::bf16, &formats::tf32, &formats::e4m3, &formats::e5m2}) {
    CAPTURE(in->name);
    const MmaInstruction* ins = find_mma_instruction(*in, formats::fp32, F::wgmma);
    REQUIRE(ins != nullptr);
    CHECK(ins->m() == 64);
    CHECK(ins->k() * in->storage_bits == 256);
    CHECK(ins->runs_on(90));
    CHECK_FALSE(ins->runs_on(89));
    CHECK_FALSE(ins->runs_on(100));  // Blackwell has no wgmma
    CHECK(std::string(ins->ptx).starts_with("wgmma.mma_async.sync.aligned.m64n8k"));
  }
  CHECK(find_mma_instruction(formats::fp16, formats::fp16, F::wgmma) != nullptr);
  CHECK(find_mma_instruction(formats::e5m2, formats::fp16, F::wgmma) != nullptr);
  CHECK(find_mma_instruction(formats::bf16, formats::fp16, F::wgmma) == nullptr);
  CHECK(find_mma_instruction(formats::tf32, formats::fp16, F::wgmma) == nullptr);
  // A wgmma tile is 64 rows: an mma.sync-sized one is rejected before any device is looked for.
  const MmaInstruction& wg = *find_mma_instruction(formats::bf16, formats::fp32, F::wgmma);
  const MmaInstruction& sync = *find_mma_instruction(formats::bf16, formats::fp32);
  CHECK_NOTHROW(check_tiles(wg, zero_tiles(wg, 2)));
  CHECK_THROWS_AS(check_tiles(wg, zero_tiles(sync, 2)), std::invalid_argument);
  CHECK_THROWS_AS(run_mma(wg, zero_tiles(sync, 2)), std::invalid_argument);
}

TEST_CASE("check_tiles rejects sizes and words that do not fit") {
  const MmaInstruction& ins = *find_mma_instruction(formats::fp16, formats::fp32);
  CHECK_NOTHROW(check_tiles(ins, zero_tiles(ins, 3)));
  MmaTiles t = zero_tiles(ins, 3);
  t.count = 0;
  CHECK_THROWS_AS(check_tiles(ins, t), std::invalid_argument);
  t = zero_tiles(ins, 3);
  t.a.pop_back();
  CHECK_THROWS_AS(check_tiles(ins, t), std::invalid_argument);
  t = zero_tiles(ins, 3);
  t.b.push_back(0);
  CHECK_THROWS_AS(check_tiles(ins, t), std::invalid_argument);
  t = zero_tiles(ins, 3);
  t.a[5] = 0x12345;  // wider than fp16
  CHECK_THROWS_AS(check_tiles(ins, t), std::invalid_argument);
  const MmaInstruction& fp8 = *find_mma_instruction(formats::e4m3, formats::fp16);
  t = zero_tiles(fp8, 1);
  t.c[0] = 0x10000;  // wider than the fp16 accumulator
  CHECK_THROWS_AS(check_tiles(fp8, t), std::invalid_argument);
  // run_mma checks before it looks for a device.
  t = zero_tiles(ins, 2);
  t.c.pop_back();
  CHECK_THROWS_AS(run_mma(ins, t), std::invalid_argument);
}

TEST_CASE("the GPU's emulated conversion refuses a format wider than 32 bits in one line, before any device call") {
  CHECK_THROWS_WITH_AS(fmtcheck::cuda::check_gpu_target(fmtcheck::formats::fp64),
                       "format fp64 has 64-bit containers; the GPU converts into formats of at most 32 bits",
                       std::invalid_argument);
  const std::vector<float> in(4, 1.0f);
  CHECK_THROWS_AS(fmtcheck::cuda::convert_on_gpu(in, fmtcheck::formats::fp64, {}), std::invalid_argument);
}
