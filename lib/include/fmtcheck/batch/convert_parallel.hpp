// A whole tensor converted on several threads, from float32, float64 or the
// codes of another format: each thread takes chunks of consecutive values,
// and the result is the same as one convert_batch call on the whole tensor
// (stochastic rounding draws RandomStream{seed} at each value's index).
#pragma once

#include <cstdint>
#include <span>
#include <variant>

#include "fmtcheck/core/flags.hpp"
#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/policy.hpp"

namespace fmtcheck {

// The values to convert: float32 and float64 as themselves, or container
// bits of `from` (a format float32 holds: every preset but fp64), decoded
// exactly to float32 first.
struct BatchSource {
  std::variant<std::span<const float>, std::span<const double>, std::span<const std::uint8_t>,
               std::span<const std::uint16_t>, std::span<const std::uint32_t>>
      values;
  Format from = formats::fp32;
  [[nodiscard]] std::size_t size() const {
    return std::visit([](auto v) { return v.size(); }, values);
  }
};

// Writes the container bits of `to` (element width to.storage_bits, out as
// long as the input) and returns the flag counts; threads 0: every core.
// float32 values go through convert_batch's SIMD kernels, float64 values
// through the core one by one. Throws std::invalid_argument for a size or
// width that does not match.
FlagCounts convert_parallel(const BatchSource& in, const Format& to, const Policy& p, std::span<std::uint8_t> out,
                            std::uint64_t seed = 0, unsigned threads = 0);
FlagCounts convert_parallel(const BatchSource& in, const Format& to, const Policy& p, std::span<std::uint16_t> out,
                            std::uint64_t seed = 0, unsigned threads = 0);
FlagCounts convert_parallel(const BatchSource& in, const Format& to, const Policy& p, std::span<std::uint32_t> out,
                            std::uint64_t seed = 0, unsigned threads = 0);
FlagCounts convert_parallel(const BatchSource& in, const Format& to, const Policy& p, std::span<std::uint64_t> out,
                            std::uint64_t seed = 0, unsigned threads = 0);

// Codes of `from` decoded to float32 on several threads (decode_batch's contract).
void decode_parallel(const BatchSource& codes, std::span<float> out, unsigned threads = 0);

}  // namespace fmtcheck
