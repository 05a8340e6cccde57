// Derives the batch kernel's constants from the format description and the
// policy, and decides which pairs the kernel serves: signed formats with
// subnormals, 8- or 16-bit containers (or tf32's 32, the code above 13 zero
// bits), and a range inside float32's normal exponent range, so that every
// finite float32 lands in one code formula; besides them E8M0, and fp32 and
// fp64, which take every float32 as it is.
#include "batch/convert_plan.hpp"

#include <algorithm>
#include <vector>

#include "fmtcheck/core/nan_rules.hpp"
#include "fmtcheck/core/unpacked.hpp"

namespace fmtcheck::detail {

std::span<const ProvenPair> kernel_proven_pairs() {
  static const std::vector<ProvenPair> pairs = [] {
    // The training formats under every rounding mode, saturation, ftz, daz
    // and stochastic rounding on every bit of a RandomStream draw: one axis
    // away from the default policy at a time.
    const Policy one_axis[] = {
        Policy{},
        Policy{.rounding = Rounding::rna},
        Policy{.rounding = Rounding::rtz},
        Policy{.rounding = Rounding::rup},
        Policy{.rounding = Rounding::rdn},
        Policy{.rounding = Rounding::rto},
        Policy{.overflow = Overflow::sat},
        Policy{.subnormals = Subnormals::ftz},
        Policy{.subnormals = Subnormals::daz},
        Policy{.rounding = Rounding::sr, .random_bit_count = 32},
    };
    std::vector<ProvenPair> list;
    for (const Format* f : {&formats::fp16, &formats::bf16, &formats::e4m3, &formats::e5m2}) {
      for (const Policy& p : one_axis) list.push_back({f, p});
    }
    // The other small formats with the default policy.
    for (const Format* f : {&formats::e4m3fnuz, &formats::e5m2fnuz, &formats::e2m3, &formats::e3m2, &formats::e2m1}) {
      list.push_back({f, Policy{}});
    }
    // TF32 in nearest-even, and in nearest with ties away, as NVIDIA's
    // cvt.rna.tf32.f32 rounds a TF32 matmul's float inputs.
    list.push_back({&formats::tf32, Policy{}});
    list.push_back({&formats::tf32, Policy{.rounding = Rounding::rna}});
    // NVIDIA's conversions from float, which give NaN as NanConvention::cuda
    // does: cvt.rn / cvt.rz to f16 and bf16 (__float2half_rn, _rz,
    // __float2bfloat16_rn, _rz), and to FP8 in rn with .satfinite (the only
    // device form) or without (__nv_cvt_float_to_fp8 with __NV_NOSAT).
    for (const Format* f : {&formats::fp16, &formats::bf16}) {
      for (const Rounding r : {Rounding::rne, Rounding::rtz}) {
        list.push_back({f, Policy{.rounding = r, .nan = NanConvention::cuda}});
      }
    }
    for (const Format* f : {&formats::e4m3, &formats::e5m2}) {
      for (const Overflow o : {Overflow::sat, Overflow::nosat}) {
        list.push_back({f, Policy{.overflow = o, .nan = NanConvention::cuda}});
      }
    }
    // PyTorch's CPU casts x.to(dtype), as tests/torch/test_casts_every_float32.py
    // found them on every float32 input: nearest-even, e4m3fn saturating
    // (infinities too), the others not, NaNs as NanConvention::torch.
    list.push_back({&formats::e4m3, Policy{.overflow = Overflow::sat, .nan = NanConvention::torch}});
    for (const Format* f : {&formats::fp16, &formats::bf16, &formats::e5m2, &formats::e4m3fnuz, &formats::e5m2fnuz}) {
      list.push_back({f, Policy{.nan = NanConvention::torch}});
    }
    // E8M0 in nearest-even and in the two modes of Blackwell's
    // cvt.{rz,rp}.satfinite.ue8m0x2.f32 (an MX block's scale rounded down
    // or up), and fp32 and fp64 with the default policy: the sweeps of every
    // format but these took the kernel.
    for (const Rounding r : {Rounding::rne, Rounding::rtz, Rounding::rup}) {
      list.push_back({&formats::e8m0, Policy{.rounding = r}});
    }
    list.push_back({&formats::fp32, Policy{}});
    list.push_back({&formats::fp64, Policy{}});
    return list;
  }();
  return pairs;
}

std::optional<ConvertPlan> make_convert_plan(const Format& f, const Policy& p) {
  const auto proven = kernel_proven_pairs();
  if (std::none_of(proven.begin(), proven.end(),
                   [&](const ProvenPair& pair) { return *pair.format == f && pair.policy == p; })) {
    return std::nullopt;
  }
  if (p.rounding == Rounding::sr && (p.random_bit_count < 1 || p.random_bit_count > 32)) return std::nullopt;
  ConvertPlan plan;
  plan.format = &f;
  plan.policy = &p;
  plan.random_bit_count = static_cast<std::uint32_t>(p.rounding == Rounding::sr ? p.random_bit_count : 0);
  if (same_encoding(f, formats::fp32) || same_encoding(f, formats::fp64)) {
    plan.route = Route::exact;
    return plan;
  }
  if (same_encoding(f, formats::e8m0)) {
    plan.route = Route::power_of_two;
    plan.negative_result = round_to_format(unpack(-1.0f), f, p);
    plan.overflow_result = round_to_format(unpack(0x1p128), f, p);  // above the largest binade: any mode overflows
    return plan;
  }
  const bool container_ok = ((f.storage_bits == 8 || f.storage_bits == 16) && f.pad_bits == 0) ||
                            (f.storage_bits == 32 && f.width() + f.pad_bits == 32);
  const int min_field = f.min_exponent() + 127;
  if (!container_ok || !f.is_signed || !f.has_subnormals || f.mantissa_bits < 1 || f.mantissa_bits > 22 ||
      min_field < 1 || f.max_exponent() > 127) {
    return std::nullopt;
  }
  plan.mantissa_bits = static_cast<std::uint32_t>(f.mantissa_bits);
  plan.min_field = static_cast<std::uint32_t>(min_field);
  plan.max_field = static_cast<std::uint32_t>(f.max_exponent() + 127);
  plan.max_finite = static_cast<std::uint32_t>(f.max_finite_code());
  plan.sign_bit = static_cast<std::uint32_t>(f.sign_bit());
  plan.pad_bits = static_cast<std::uint32_t>(f.pad_bits);
  for (const bool sign : {false, true}) {
    plan.overflow_code[sign ? 1 : 0] = static_cast<std::uint32_t>(
        f.has_inf() ? (sign ? f.sign_bit() : 0) | f.infinity_code() : created_nan_code(f, p.nan, sign));
  }
  plan.overflow_is_nan = !f.has_inf();
  plan.negative_zero = f.has_negative_zero();
  // Finite overflow only: infinite inputs go to the core, where sat and satprop differ.
  plan.saturate_always = p.overflow != Overflow::nosat || f.specials == Specials::none;
  plan.flush_inputs = p.flush_inputs();
  plan.flush_results = p.flush_results();
  plan.tiny_after = p.tininess == Tininess::after;
  // vcvtps2ph has every deterministic mode but rna (rto by two of them).
  plan.hardware_fp16 = same_encoding(f, formats::fp16) && p.rounding != Rounding::sr && p.rounding != Rounding::rna;
  plan.subnormal_inputs_to_core = min_field == 1 && !p.flush_inputs();
  // Round-to-odd to bf16 keeps 7 mantissa bits and float32's exponent
  // range: two bits to spare for a format of at most 5 mantissa bits, down
  // to a rounding position above bf16's subnormal range.
  const Format& bf16 = formats::bf16;
  plan.via_bf16 = f.storage_bits == 8 && p.rounding != Rounding::sr && f.mantissa_bits + 2 <= bf16.mantissa_bits &&
                  f.min_exponent() - f.mantissa_bits - 2 >= bf16.min_exponent();
  return plan;
}

}  // namespace fmtcheck::detail
