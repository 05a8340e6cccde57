// Batch conversion: the SIMD kernel where it serves the format, the policy
// and the CPU, the table of the core's results for the P3109 members, the
// rounding core for everything else.
#include "fmtcheck/batch/convert_batch.hpp"

#include <stdexcept>
#include <string>

#include "batch/convert_fast.hpp"
#include "batch/convert_table.hpp"

namespace fmtcheck {
namespace {

// Where stochastic rounding's draws come from: one per value in an array,
// a counter-based stream, or neither (policy.random_bits for every value).
struct Draws {
  std::span<const std::uint32_t> array;
  const RandomStream* stream = nullptr;
};

template <typename Out>
FlagCounts convert_batch_impl(std::span<const float> in, const Format& to, const Policy& p, std::span<Out> out,
                              Draws draws) {
  if (static_cast<int>(sizeof(Out) * 8) != to.storage_bits) {
    throw std::invalid_argument("convert_batch: output elements are " + std::to_string(sizeof(Out) * 8) +
                                " bits but " + to.name + " is stored in " + std::to_string(to.storage_bits));
  }
  if (out.size() < in.size()) throw std::invalid_argument("convert_batch: output shorter than input");
  const bool stochastic = is_stochastic(p.rounding);
  const bool from_array = stochastic && !draws.array.empty();
  if (from_array && draws.array.size() < in.size()) {
    throw std::invalid_argument("convert_batch: fewer random draws than values");
  }
  const RandomStream* stream = stochastic ? draws.stream : nullptr;
  FlagCounts counts;
  // The SIMD kernel, where it serves this format and policy and the CPU
  // has AVX2 or AVX-512 (the targets proven on every input); it hands
  // every value it does not serve to the core itself. Under stochastic
  // rounding it serves the counter-based stream only.
  // The CPU is asked for its targets only where a plan exists: the
  // question costs as much as converting a few hundred values.
  const auto plan = detail::make_convert_plan(to, p);
  const detail::KernelTarget* target = plan ? detail::best_kernel_target() : nullptr;
  if (target != nullptr && (!stochastic || stream != nullptr)) {
    detail::convert_float32_fast(*target, *plan, in.data(), in.size(), out.data(), stream, &counts);
    return counts;
  }
  if constexpr (sizeof(Out) == 1) {
    if (const auto table = detail::convert_table(to, p)) {
      detail::convert_with_table(*table, in.data(), in.size(), out.data(), &counts);
      return counts;
    }
  }
  detail::convert_with_core(to, p, in.data(), in.size(), out.data(), [&](std::size_t i) {
    return from_array ? draws.array[i] : stream != nullptr ? stream->draw(i) : p.random_bits;
  }, &counts);
  return counts;
}

}  // namespace

FlagCounts convert_batch(std::span<const float> in, const Format& to, const Policy& p, std::span<std::uint8_t> out,
                         std::span<const std::uint32_t> random) {
  return convert_batch_impl(in, to, p, out, Draws{random});
}
FlagCounts convert_batch(std::span<const float> in, const Format& to, const Policy& p, std::span<std::uint16_t> out,
                         std::span<const std::uint32_t> random) {
  return convert_batch_impl(in, to, p, out, Draws{random});
}
FlagCounts convert_batch(std::span<const float> in, const Format& to, const Policy& p, std::span<std::uint32_t> out,
                         std::span<const std::uint32_t> random) {
  return convert_batch_impl(in, to, p, out, Draws{random});
}
FlagCounts convert_batch(std::span<const float> in, const Format& to, const Policy& p, std::span<std::uint64_t> out,
                         std::span<const std::uint32_t> random) {
  return convert_batch_impl(in, to, p, out, Draws{random});
}

FlagCounts convert_batch(std::span<const float> in, const Format& to, const Policy& p, std::span<std::uint8_t> out,
                         RandomStream draws) {
  return convert_batch_impl(in, to, p, out, Draws{{}, &draws});
}
FlagCounts convert_batch(std::span<const float> in, const Format& to, const Policy& p, std::span<std::uint16_t> out,
                         RandomStream draws) {
  return convert_batch_impl(in, to, p, out, Draws{{}, &draws});
}
FlagCounts convert_batch(std::span<const float> in, const Format& to, const Policy& p, std::span<std::uint32_t> out,
                         RandomStream draws) {
  return convert_batch_impl(in, to, p, out, Draws{{}, &draws});
}
FlagCounts convert_batch(std::span<const float> in, const Format& to, const Policy& p, std::span<std::uint64_t> out,
                         RandomStream draws) {
  return convert_batch_impl(in, to, p, out, Draws{{}, &draws});
}

}  // namespace fmtcheck
