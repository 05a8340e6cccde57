// The table of hardware conversions and their host entry points.
#include "fmtcheck/cuda/convert.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>

#include "device_buffer.hpp"
#include "fmtcheck/core/convert.hpp"
#include "fmtcheck/cuda/device.hpp"
#include "kernel_ops.hpp"

namespace fmtcheck::cuda {
namespace {

// In detail::ConvertOp order.
const std::array<DeviceConversion, detail::convert_op_count>& table() {
  static const std::array<DeviceConversion, detail::convert_op_count> t = {{
      {&formats::fp16, Rounding::rne, 80, "cvt.rn.f16.f32"},
      {&formats::fp16, Rounding::rtz, 80, "cvt.rz.f16.f32"},
      {&formats::fp16, Rounding::rup, 80, "cvt.rp.f16.f32"},
      {&formats::fp16, Rounding::rdn, 80, "cvt.rm.f16.f32"},
      {&formats::bf16, Rounding::rne, 80, "cvt.rn.bf16.f32"},
      {&formats::bf16, Rounding::rtz, 80, "cvt.rz.bf16.f32"},
      {&formats::tf32, Rounding::rna, 80, "cvt.rna.tf32.f32"},
      {&formats::tf32, Rounding::rne, 90, "cvt.rn.tf32.f32"},
      {&formats::tf32, Rounding::rtz, 90, "cvt.rz.tf32.f32"},
      {&formats::e4m3, Rounding::rne, 89, "cvt.rn.satfinite.e4m3x2.f32"},
      {&formats::e5m2, Rounding::rne, 89, "cvt.rn.satfinite.e5m2x2.f32"},
  }};
  return t;
}

void require_capability(int needed, const char* what) {
  const DeviceInfo d = require_device();
  if (d.compute_capability() < needed) {
    throw std::invalid_argument(std::string(what) + " needs compute capability " + std::to_string(needed / 10) + "." +
                                std::to_string(needed % 10) + "; " + d.name + " has " + std::to_string(d.major) +
                                "." + std::to_string(d.minor));
  }
}

// Runs `launch` over chunks of at most max_elements_per_launch elements.
template <class In, class Launch>
std::vector<std::uint32_t> chunked(std::span<const In> in, Launch launch) {
  std::vector<std::uint32_t> out(in.size());
  for (std::size_t first = 0; first < in.size(); first += max_elements_per_launch) {
    const std::size_t n = std::min(max_elements_per_launch, in.size() - first);
    detail::DeviceBuffer<In> d_in(in.subspan(first, n));
    detail::DeviceBuffer<std::uint32_t> d_out(n);
    launch(d_in.get(), d_out.get(), n, elementwise_launch(n));
    const std::vector<std::uint32_t> part = d_out.to_host();
    std::copy(part.begin(), part.end(), out.begin() + static_cast<std::ptrdiff_t>(first));
  }
  return out;
}

}  // namespace

Policy DeviceConversion::policy() const {
  Policy p;
  p.rounding = rounding;
  p.overflow = target->specials == Specials::ieee && target->width() > 8 ? Overflow::nosat : Overflow::sat;
  p.nan = NanConvention::cuda;
  return p;
}

std::uint32_t expected_conversion(const DeviceConversion& conv, std::uint32_t x) {
  const bool nan = (x & 0x7F800000u) == 0x7F800000u && (x & 0x007FFFFFu) != 0;
  if (nan && *conv.target == formats::tf32 && conv.rounding == Rounding::rna) return x & ~0x1FFFu;
  return static_cast<std::uint32_t>(convert_bits(x, formats::fp32, *conv.target, conv.policy()).bits);
}

std::uint32_t expected_widening(const Format& from, std::uint32_t bits) {
  const bool moved = from == formats::bf16 || from == formats::tf32;  // no cvt: the register moves
  if (moved && classify(from, bits) == ValueClass::nan) return from == formats::bf16 ? bits << 16 : bits;
  Policy p;
  p.nan = NanConvention::cuda;
  return static_cast<std::uint32_t>(convert_bits(bits, from, formats::fp32, p).bits);
}

std::span<const DeviceConversion> device_conversions() { return table(); }

const DeviceConversion* find_device_conversion(const Format& target, Rounding rounding) {
  for (const DeviceConversion& c : table()) {
    if (*c.target == target && c.rounding == rounding) return &c;
  }
  return nullptr;
}

std::vector<std::uint32_t> convert_on_device(const DeviceConversion& conv, std::span<const float> in) {
  const auto index = &conv - table().data();
  if (index < 0 || index >= detail::convert_op_count) {
    throw std::invalid_argument("convert_on_device: not one of device_conversions()");
  }
  if (in.empty()) return {};
  require_capability(conv.min_compute_capability, conv.ptx.data());
  const auto op = static_cast<detail::ConvertOp>(index);
  return chunked(in, [op](const float* d_in, std::uint32_t* d_out, std::size_t n, LaunchConfig cfg) {
    detail::launch_convert(op, d_in, d_out, n, cfg);
  });
}

std::vector<std::uint32_t> widen_on_device(const Format& from, std::span<const std::uint32_t> bits) {
  static const std::array<std::pair<const Format*, detail::WidenOp>, 5> ops = {{
      {&formats::fp16, detail::WidenOp::f16},
      {&formats::bf16, detail::WidenOp::bf16},
      {&formats::tf32, detail::WidenOp::tf32},
      {&formats::e4m3, detail::WidenOp::e4m3},
      {&formats::e5m2, detail::WidenOp::e5m2},
  }};
  const auto it = std::find_if(ops.begin(), ops.end(), [&](const auto& o) { return *o.first == from; });
  if (it == ops.end()) throw std::invalid_argument("widen_on_device: no hardware conversion from " + from.name);
  for (const std::uint32_t b : bits) {
    if ((b & ~from.storage_mask()) != 0 || (b & ((std::uint32_t{1} << from.pad_bits) - 1)) != 0) {
      throw std::invalid_argument("widen_on_device: bits outside a " + from.name + " container");
    }
  }
  if (bits.empty()) return {};
  require_capability(it->second == detail::WidenOp::e4m3 || it->second == detail::WidenOp::e5m2 ? 89 : 80,
                     "widening to fp32");
  const detail::WidenOp op = it->second;
  return chunked(bits, [op](const std::uint32_t* d_in, std::uint32_t* d_out, std::size_t n, LaunchConfig cfg) {
    detail::launch_widen(op, d_in, d_out, n, cfg);
  });
}

}  // namespace fmtcheck::cuda
