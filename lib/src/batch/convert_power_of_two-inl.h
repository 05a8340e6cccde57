// The kernel's route to E8M0 (Route::power_of_two), a part of
// convert_fast.cpp: it includes this file inside its per-target
// namespace once per SIMD target, after RoundAway and Draws, so there is no
// include guard.
//
// E8M0 is float32's exponent field alone: code c means 2^(c - 127), 0 ..
// 254, and 255 is NaN; no sign, no zero. For a positive normal float32 the
// core's truncated code is the exponent field itself (a format without
// mantissa bits keeps none of the mantissa), the whole mantissa is what
// rounding discards, and the field's parity is the code's. Rounding up
// from field 254 overflows. Every negative normal input gives the core's
// one result for a negative value (a NaN), every overflow the core's one
// overflow result, both taken from the core by the plan. Zeros, float32
// subnormals (E8M0's lowest binade, 2^-127, and the values below it),
// infinities and NaNs go to the core.

// Every served lane is exact, inexact, negative or an overflow: these count
// the last three, and the flags of each come from the plan.
struct PowerOfTwoTallies {
  std::uint64_t inexact = 0, negative = 0, overflow = 0;
};

template <Rounding R>
void ConvertPowerOfTwo(const ConvertPlan& plan, const float* in, std::size_t n, std::uint8_t* out,
                       const RandomStream* caller_stream, FlagCounts* counts) {
  // The loop reads locals only: the 8-bit stores may alias the caller's
  // plan and stream (see ConvertKernel).
  const std::uint32_t random_bit_count = plan.random_bit_count;
  const RandomStream stream_copy = caller_stream != nullptr ? *caller_stream : RandomStream{};
  const RandomStream* const stream = caller_stream != nullptr ? &stream_copy : nullptr;
  const D d;
  const hn::Rebind<float, D> df;
  const hn::Rebind<std::int32_t, D> di;
  const hn::Rebind<std::uint8_t, D> dout;
  const std::size_t lanes = hn::Lanes(d);
  const V zero = hn::Zero(d);
  const V mantissa_mask = hn::Set(d, 0x007FFFFFu);
  const V half_minus_one = hn::Set(d, 0x003FFFFFu);
  const V mantissa_bits = hn::Set(d, 23u);
  const V past_largest = hn::Set(d, 255u);  // the code rounding up from 2^127 reaches
  const V negative_code = hn::Set(d, static_cast<std::uint32_t>(plan.negative_result.bits));
  const V overflow_code = hn::Set(d, static_cast<std::uint32_t>(plan.overflow_result.bits));
  PowerOfTwoTallies tally;
  std::uint64_t served = 0;
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const V u = hn::BitCast(d, hn::LoadU(df, in + i));
    const V a = u & hn::Set(d, 0x7FFFFFFFu);
    if (HWY_UNLIKELY(!hn::AllFalse(d, FieldZeroOrAllOnes(a)))) {
      convert_with_core(plan, in + i, lanes, out + i, stream, i, counts);
      continue;
    }
    served += lanes;
    const V field = hn::ShiftRight<23>(a);
    const M negative = u != a;
    const V rem = a & mantissa_mask;
    const V r = R == Rounding::sr ? Draws(d, *stream, i) : zero;
    const M away = RoundAway<R>(d, field, rem, half_minus_one, mantissa_bits, negative, r, random_bit_count);
    const V code = field - hn::VecFromMask(d, away);
    const M overflow = hn::AndNot(negative, code == past_largest);
    const V bits = hn::IfThenElse(negative, negative_code, hn::IfThenElse(overflow, overflow_code, code));
    tally.negative += hn::CountTrue(d, negative);
    tally.overflow += hn::CountTrue(d, overflow);
    tally.inexact += hn::CountTrue(d, hn::AndNot(hn::Or(negative, overflow), rem != zero));
    hn::StoreU(hn::DemoteTo(dout, hn::BitCast(di, bits)), dout, out + i);
  }
  counts->add(plan.negative_result.flags, tally.negative);
  counts->add(plan.overflow_result.flags, tally.overflow);
  counts->add(Flag::inexact, tally.inexact);
  counts->add(Flags(), served - tally.negative - tally.overflow - tally.inexact);
  convert_with_core(plan, in + i, n - i, out + i, stream, i, counts);
}
