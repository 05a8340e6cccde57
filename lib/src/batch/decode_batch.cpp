// Batch decoding into float32. fp16, bf16, every 8-bit format with
// subnormals inside float32's normal range (all 8-bit presets but E8M0),
// and tf32 and fp32 containers go through a SIMD kernel
// (decode_fast.hpp): a 16-bit format's table is 256 KiB, too big for
// L1, and its lookups ran at about half memcpy speed, an 8-bit one's at
// 0.6x memcpy (one scalar load per value). Other 8- and 16-bit containers
// (E8M0, custom formats) take such a table of every code's float32, filled
// by the scalar decode (to_double) and kept per format.
// tests/batch proves the batch against the scalar decode on every code of
// every 8- and 16-bit preset and of tf32, and a stride of fp32's.
#include <bit>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "batch/decode_fast.hpp"
#include "fmtcheck/batch/decode_batch.hpp"
#include "fmtcheck/core/decode.hpp"

namespace fmtcheck {
namespace {

float decode_one(const Format& f, std::uint64_t bits) { return static_cast<float>(to_double(f, bits)); }

// Below this many values, filling a table costs more than it saves.
constexpr std::size_t kTableWorthIt = 4;  // times the table's size

// One table per format seen, for the life of the process (a handful of formats).
const std::vector<float>& table_for(const Format& f) {
  static std::mutex mutex;
  static std::vector<std::pair<Format, std::unique_ptr<const std::vector<float>>>> tables;
  const std::lock_guard lock(mutex);
  for (const auto& [format, table] : tables) {
    if (format == f) return *table;
  }
  auto table = std::make_unique<std::vector<float>>(std::size_t{1} << f.storage_bits);
  for (std::size_t code = 0; code < table->size(); ++code) (*table)[code] = decode_one(f, code);
  tables.emplace_back(f, std::move(table));
  return *tables.back().second;
}

// tf32 and fp32: the container holds a float32's own bits (tf32's low 13
// are padding, which the scalar decode ignores too), so every value but a
// NaN, which the scalar decode makes quiet, is its container.
bool float32_container(const Format& f) {
  return same_encoding(f, formats::fp32) || same_encoding(f, formats::tf32);
}

// The SIMD kernel that decodes f's encoding (the name aside), if any.
enum class Kernel { none, small_float, fp16, bf16, float32 };
Kernel kernel_for(const Format& f) {
  if (detail::small_float_decode(f)) return Kernel::small_float;
  if (same_encoding(f, formats::fp16)) return Kernel::fp16;
  if (same_encoding(f, formats::bf16)) return Kernel::bf16;
  if (float32_container(f)) return Kernel::float32;
  return Kernel::none;
}

// Decodes the longest run of whole vectors from the start of `in` with
// f's kernel (f's container is In, which the caller checked) and returns
// its length: 0 where there is no kernel, or where it declines on this CPU
// (fp16 below AVX2).
template <typename In>
std::size_t decode_with_kernel(const Format& f, const In* in, std::size_t n, float* out) {
  const Kernel kernel = kernel_for(f);
  if constexpr (std::is_same_v<In, std::uint8_t>) {
    if (kernel == Kernel::small_float) {
      return detail::decode_small_float_fast(*detail::small_float_decode(f), in, n, out);
    }
  } else if constexpr (std::is_same_v<In, std::uint16_t>) {
    if (kernel == Kernel::fp16) return detail::decode_fp16_fast(in, n, out);
    if (kernel == Kernel::bf16) return detail::decode_bf16_fast(in, n, out);
  } else if (kernel == Kernel::float32) {
    return detail::decode_float32_fast(in, n, ~((std::uint32_t{1} << f.pad_bits) - 1), out);
  }
  return 0;
}

template <typename In>
void decode_batch_impl(std::span<const In> bits, const Format& from, std::span<float> out) {
  if (static_cast<int>(sizeof(In) * 8) != from.storage_bits) {
    throw std::invalid_argument("decode_batch: input elements are " + std::to_string(sizeof(In) * 8) + " bits but " +
                                from.name + " is stored in " + std::to_string(from.storage_bits));
  }
  if (out.size() < bits.size()) throw std::invalid_argument("decode_batch: output shorter than input");
  if (!float32_holds(from)) {
    throw std::invalid_argument("decode_batch: float32 cannot hold every value of " + from.name);
  }
  // The kernel needs no table, so it takes batches of any length; it leaves
  // the tail after its last whole vector, or everything where it declines.
  const std::size_t done = decode_with_kernel(from, bits.data(), bits.size(), out.data());
  if constexpr (sizeof(In) <= 2) {
    if (bits.size() - done >= kTableWorthIt << from.storage_bits) {
      const float* table = table_for(from).data();
      for (std::size_t i = done; i < bits.size(); ++i) out[i] = table[bits[i]];
      return;
    }
  }
  for (std::size_t i = done; i < bits.size(); ++i) out[i] = decode_one(from, bits[i]);
}

}  // namespace

bool float32_holds(const Format& f) {
  const int lowest = f.has_subnormals ? f.min_exponent() - f.mantissa_bits : f.min_exponent();
  return f.storage_bits <= 32 && f.precision() <= 24 && f.max_exponent() <= 127 && lowest >= -149;
}

bool detail::decodes_without_table(const Format& f) { return kernel_for(f) != Kernel::none; }

void decode_batch(std::span<const std::uint8_t> bits, const Format& from, std::span<float> out) {
  decode_batch_impl(bits, from, out);
}
void decode_batch(std::span<const std::uint16_t> bits, const Format& from, std::span<float> out) {
  decode_batch_impl(bits, from, out);
}
void decode_batch(std::span<const std::uint32_t> bits, const Format& from, std::span<float> out) {
  decode_batch_impl(bits, from, out);
}

}  // namespace fmtcheck
