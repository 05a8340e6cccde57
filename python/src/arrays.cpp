#include "arrays.hpp"

#include <nanobind/stl/string.h>

#include <algorithm>
#include <iterator>
#include <type_traits>

namespace fmtcheck::python {
namespace {

bool is(const Array& a, nb::dlpack::dtype_code code, int bits) {
  return a.dtype().code == static_cast<std::uint8_t>(code) && a.dtype().bits == bits && a.dtype().lanes == 1;
}

// DLPack 1.x's types of 8 bits and less (dlpack.h, kDLFloat8_e3m4 = 7 to
// kDLFloat4_e2m1fn = 17), by type code, with the fmtcheck format of each 8-bit
// one (as ml_dtypes' type of the same name; none for FP6 and FP4, which DLPack
// gives 6 and 4 bits, not a byte per code as ml_dtypes stores them).
struct SmallFloat {
  const char* dlpack_name;
  const char* format;
};
constexpr std::uint8_t first_small_float = 7;
constexpr SmallFloat small_floats[] = {
    {"float8_e3m4", "e3m4"},         {"float8_e4m3", "e4m3ieee"}, {"float8_e4m3b11fnuz", "e4m3fnuz_b11"},
    {"float8_e4m3fn", "e4m3"},       {"float8_e4m3fnuz", "e4m3fnuz"}, {"float8_e5m2", "e5m2"},
    {"float8_e5m2fnuz", "e5m2fnuz"}, {"float8_e8m0fnu", "e8m0"},  {"float6_e2m3fn", nullptr},
    {"float6_e3m2fn", nullptr},      {"float4_e2m1fn", nullptr},
};

const SmallFloat* small_float(const Array& a) {
  const auto i = static_cast<std::size_t>(a.dtype().code) - first_small_float;
  return a.dtype().code >= first_small_float && i < std::size(small_floats) ? &small_floats[i] : nullptr;
}

template <typename T>
std::span<const T> span_of(const Array& a) {
  return {static_cast<const T*>(a.data()), a.size()};
}

Format code_format(const Array& a, const std::optional<std::string>& from) {
  if (!from) {
    throw nb::type_error(("unsigned " + std::to_string(a.dtype().bits) +
                          "-bit input holds codes: say which format with from_=FORMAT").c_str());
  }
  const Format f = format_from_string(*from);
  if (f.storage_bits != static_cast<int>(a.dtype().bits)) {
    throw std::invalid_argument(f.name + " codes are stored in " + std::to_string(f.storage_bits) + " bits, not " +
                                std::to_string(a.dtype().bits));
  }
  return f;
}

}  // namespace

std::string dtype_name(const Array& a) {
  const char* kinds[] = {"int", "uint", "float", "opaque handle", "bfloat", "complex", "bool"};
  const auto code = a.dtype().code;
  const std::string bits = std::to_string(a.dtype().bits);
  if (const SmallFloat* f = small_float(a)) return std::string(f->dlpack_name) + " (" + bits + " bits)";
  return std::string(code < 7 ? kinds[code] : "dtype code " + std::to_string(code)) + bits;
}

std::optional<std::string> dtype_format(const Array& a) {
  if (is(a, nb::dlpack::dtype_code::Bfloat, 16)) return "bf16";
  if (const SmallFloat* f = small_float(a); f && f->format && a.dtype().bits == 8 && a.dtype().lanes == 1) return f->format;
  return std::nullopt;
}

BatchSource batch_source(const Array& a, const std::optional<std::string>& from) {
  using nb::dlpack::dtype_code;
  if (is(a, dtype_code::Float, 32)) return {span_of<float>(a), formats::fp32};
  if (is(a, dtype_code::Float, 64)) return {span_of<double>(a), formats::fp64};
  if (is(a, dtype_code::Float, 16)) return {span_of<std::uint16_t>(a), formats::fp16};
  if (const auto f = dtype_format(a)) {  // bfloat16 and the FP8 types: codes
    if (a.dtype().bits == 8) return {span_of<std::uint8_t>(a), format_from_string(*f)};
    return {span_of<std::uint16_t>(a), format_from_string(*f)};
  }
  if (is(a, dtype_code::UInt, 8)) return {span_of<std::uint8_t>(a), code_format(a, from)};
  if (is(a, dtype_code::UInt, 16)) return {span_of<std::uint16_t>(a), code_format(a, from)};
  if (is(a, dtype_code::UInt, 32)) return {span_of<std::uint32_t>(a), code_format(a, from)};
  if (is(a, dtype_code::UInt, 64)) {
    // fp64 codes are doubles; no 64-bit user format goes through the batch paths.
    if (code_format(a, from) == formats::fp64) return {span_of<double>(a), formats::fp64};
    throw std::invalid_argument("64-bit codes are read only as fp64, not " + *from);
  }
  throw nb::type_error(("expected float32, float64, float16, bfloat16, an FP8 type, an ml_dtypes type or unsigned codes, not " +
                        dtype_name(a)).c_str());
}

MemoryTensor memory_tensor(std::string name, const Array& a, const std::optional<std::string>& from) {
  std::vector<std::uint64_t> shape(a.ndim());
  for (std::size_t d = 0; d < a.ndim(); ++d) shape[d] = a.shape(d);
  if (is(a, nb::dlpack::dtype_code::UInt, 64)) return {std::move(name), code_format(a, from), shape, a.data()};
  return {std::move(name), batch_source(a, from).from, shape, a.data()};
}

std::vector<std::uint64_t> codes_of(const Array& a, const char* what) {
  if (a.dtype().code != static_cast<std::uint8_t>(nb::dlpack::dtype_code::UInt)) {
    throw nb::type_error((std::string(what) + " must be codes (unsigned integers or an ml_dtypes array), not " + dtype_name(a)).c_str());
  }
  std::vector<std::uint64_t> out(a.size());
  const auto widen = [&](auto* p) { std::copy(p, p + a.size(), out.begin()); };
  switch (a.dtype().bits) {
    case 8: widen(static_cast<const std::uint8_t*>(a.data())); break;
    case 16: widen(static_cast<const std::uint16_t*>(a.data())); break;
    case 32: widen(static_cast<const std::uint32_t*>(a.data())); break;
    default: widen(static_cast<const std::uint64_t*>(a.data())); break;
  }
  return out;
}

template <typename T>
std::span<T> out_span(OutArray& out, std::size_t n) {
  if (out.dtype() != nb::dtype<T>()) {
    const std::string bits = std::to_string(8 * sizeof(T));
    throw nb::type_error((std::is_floating_point_v<T> ? "out= must be float" + bits
                                                      : "out= must hold unsigned " + bits + "-bit codes").c_str());
  }
  if (out.size() != n) {
    throw std::invalid_argument("out= holds " + std::to_string(out.size()) + " values, the input " + std::to_string(n));
  }
  return {static_cast<T*>(out.data()), n};
}
template std::span<std::uint8_t> out_span(OutArray&, std::size_t);
template std::span<std::uint16_t> out_span(OutArray&, std::size_t);
template std::span<std::uint32_t> out_span(OutArray&, std::size_t);
template std::span<std::uint64_t> out_span(OutArray&, std::size_t);
template std::span<float> out_span(OutArray&, std::size_t);
template std::span<double> out_span(OutArray&, std::size_t);

PolicyText policy_text(const std::string& round, const std::string& overflow, const std::string& subnormals,
                       const std::string& tininess, const std::string& nan, int sr_bits) {
  return PolicyText{round, overflow, subnormals, tininess, nan, /*sr_random=*/0, sr_bits};
}

nb::dict record_dict(const Record& record) {
  nb::dict d;
  for (const auto& [name, value] : record) {
    d[name.c_str()] = std::visit([](const auto& v) -> nb::object {
      if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::monostate>) {
        return nb::none();
      } else {
        return nb::cast(v);
      }
    }, value);
  }
  return d;
}

nb::dict flag_dict(const FlagCounts& counts) {
  nb::dict d;
  d["values"] = counts.values;
  for (int i = 0; i < flag_count; ++i) {
    d[nb::str(std::string(to_string(static_cast<Flag>(i))).c_str())] = counts.count[i];
  }
  return d;
}

}  // namespace fmtcheck::python
