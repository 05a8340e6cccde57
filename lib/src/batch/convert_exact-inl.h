// The kernel's route to fp32 and fp64 (Route::exact), a part of
// convert_fast.cpp: it includes this file inside its per-target
// namespace once per SIMD target, so there is no include guard.
//
// Both formats hold every float32: a normal value or a zero is its own
// result, exact and without a flag, under every policy (nothing rounds,
// nothing is tiny, nothing overflows). fp32's code is the input's bits;
// fp64's is the input widened by the CPU, which is exact and, for these
// values, free of MXCSR's DAZ and FTZ. Float32 subnormals (flushed under
// daz), infinities (saturated under sat) and NaNs (whose payloads follow
// the NaN convention) go to the core.
template <typename Out>
void ConvertExact(const ConvertPlan& plan, const float* in, std::size_t n, Out* out, FlagCounts* counts) {
  static_assert(sizeof(Out) == 4 || sizeof(Out) == 8, "fp32 or fp64 containers");
  const D d;
  const hn::Rebind<float, D> df;
  const hn::Repartition<std::uint64_t, D> d64;
  const hn::Repartition<double, D> dd;
  const hn::Rebind<float, decltype(dd)> df_half;  // as many floats as a vector holds doubles
  const std::size_t lanes = hn::Lanes(d);
  std::uint64_t served = 0;
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const V u = hn::BitCast(d, hn::LoadU(df, in + i));
    const V a = u & hn::Set(d, 0x7FFFFFFFu);
    const M to_core = hn::AndNot(a == hn::Zero(d), FieldZeroOrAllOnes(a));  // all but zeros and normals
    if (HWY_UNLIKELY(!hn::AllFalse(d, to_core))) {
      convert_with_core(plan, in + i, lanes, out + i, nullptr, i, counts);
      continue;
    }
    served += lanes;
    if constexpr (sizeof(Out) == 4) {
      hn::StoreU(u, d, out + i);
    } else {
      for (std::size_t j = 0; j < lanes; j += hn::Lanes(d64)) {
        hn::StoreU(hn::BitCast(d64, hn::PromoteTo(dd, hn::LoadU(df_half, in + i + j))), d64, out + i + j);
      }
    }
  }
  counts->values += served;
  convert_with_core(plan, in + i, n - i, out + i, nullptr, i, counts);
}
