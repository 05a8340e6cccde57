// Format names: presets, their common aliases, and "eXmY" spec strings.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <stdexcept>

#include "fmtcheck/core/format.hpp"

namespace fmtcheck {
namespace {

struct Alias {
  std::string_view name;
  const Format* format;
};

// Names people already use: numpy, ml_dtypes, PyTorch, CUDA.
const Alias* find_alias(std::string_view name) {
  static const Alias aliases[] = {
      {"fp64", &formats::fp64},        {"float64", &formats::fp64},
      {"double", &formats::fp64},      {"f8", &formats::fp64},
      {"fp32", &formats::fp32},        {"float32", &formats::fp32},
      {"float", &formats::fp32},       {"f4", &formats::fp32},
      {"tf32", &formats::tf32},        {"fp16", &formats::fp16},
      {"float16", &formats::fp16},     {"half", &formats::fp16},
      {"f2", &formats::fp16},          {"bf16", &formats::bf16},
      {"bfloat16", &formats::bf16},    {"e4m3", &formats::e4m3},
      {"e4m3fn", &formats::e4m3},      {"float8_e4m3fn", &formats::e4m3},
      {"fp8", &formats::e4m3},         {"e5m2", &formats::e5m2},
      {"float8_e5m2", &formats::e5m2}, {"e4m3fnuz", &formats::e4m3fnuz},
      {"float8_e4m3fnuz", &formats::e4m3fnuz}, {"e5m2fnuz", &formats::e5m2fnuz},
      {"float8_e5m2fnuz", &formats::e5m2fnuz}, {"e2m3", &formats::e2m3},
      {"fp6_e2m3", &formats::e2m3},    {"float6_e2m3fn", &formats::e2m3},
      {"e3m2", &formats::e3m2},        {"fp6_e3m2", &formats::e3m2},
      {"float6_e3m2fn", &formats::e3m2}, {"e2m1", &formats::e2m1},
      {"fp4", &formats::e2m1},         {"float4_e2m1fn", &formats::e2m1},
      {"e8m0", &formats::e8m0},        {"ue8m0", &formats::e8m0},
      {"float8_e8m0fnu", &formats::e8m0},
  };
  for (const Alias& a : aliases) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

bool read_int(std::string_view& s, int& out) {
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, out);
  if (ec != std::errc() || ptr == s.data()) return false;
  s.remove_prefix(static_cast<std::size_t>(ptr - s.data()));
  return true;
}

std::optional<Format> fail(std::string* error, std::string message) {
  if (error) *error = std::move(message);
  return std::nullopt;
}

}  // namespace

std::optional<Format> parse_format(std::string_view text, std::string* error) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (const Alias* a = find_alias(lower)) return *a->format;
  if (auto p3109 = parse_p3109_name(lower)) return p3109;
  if (lower.starts_with("binary8p") || lower.starts_with("p3109_")) {
    return fail(error, "unknown P3109 format '" + std::string(text) +
                           "': expected binary8p<P><s|u><e|f> with P 1..7 signed, 1..8 unsigned");
  }

  // eXmY[ieee|fn|fnuz|ns][_bN]
  std::string_view s = lower;
  const std::string hint = "expected a preset (see `fmtcheck ranges`), eXmY[ieee|fn|fnuz|ns][_bN] or binary8p<P><s|u><e|f>";
  int e = 0;
  int m = 0;
  if (s.empty() || s.front() != 'e') return fail(error, "unknown format '" + std::string(text) + "': " + hint);
  s.remove_prefix(1);
  if (!read_int(s, e) || s.empty() || s.front() != 'm') return fail(error, "unknown format '" + std::string(text) + "': " + hint);
  s.remove_prefix(1);
  if (!read_int(s, m)) return fail(error, "unknown format '" + std::string(text) + "': " + hint);

  Format f;
  f.exponent_bits = e;
  f.mantissa_bits = m;
  f.specials = Specials::ieee;
  std::string suffix;
  const auto underscore = s.find("_b");
  std::string_view bias_text;
  if (underscore != std::string_view::npos) {
    bias_text = s.substr(underscore + 2);
    s = s.substr(0, underscore);
  }
  if (s == "" || s == "ieee") {
    f.specials = Specials::ieee;
  } else if (s == "fn") {
    f.specials = Specials::fn;
    suffix = "fn";
  } else if (s == "fnuz") {
    f.specials = Specials::fnuz;
    suffix = "fnuz";
  } else if (s == "ns") {
    f.specials = Specials::none;
    suffix = "ns";
  } else {
    return fail(error, "unknown suffix '" + std::string(s) + "' in format '" + std::string(text) + "': " + hint);
  }
  if (e < 1 || e > 11) return fail(error, "format '" + std::string(text) + "': exponent bits must be 1..11");
  if (m < 0 || m > 52) return fail(error, "format '" + std::string(text) + "': mantissa bits must be 0..52");
  if (f.specials == Specials::ieee && m < 1) {
    return fail(error, "format '" + std::string(text) + "': an IEEE-style format needs a mantissa bit to tell NaN from infinity");
  }
  // fnuz spends the exponent-and-mantissa-zero negative code on NaN: one more
  // binade is finite, so the customary bias is one higher (E4M3FNUZ: 8).
  f.bias = (1 << (e - 1)) - 1 + (f.specials == Specials::fnuz ? 1 : 0);
  if (underscore != std::string_view::npos) {
    int bias = 0;
    if (!read_int(bias_text, bias) || !bias_text.empty()) {
      return fail(error, "format '" + std::string(text) + "': bias after _b must be an integer");
    }
    if (bias < -1100 || bias > 1100) return fail(error, "format '" + std::string(text) + "': bias out of range");
    f.bias = bias;
  }
  const int width = 1 + e + m;
  f.storage_bits = width <= 8 ? 8 : width <= 16 ? 16 : width <= 32 ? 32 : 64;
  f.name = "e" + std::to_string(e) + "m" + std::to_string(m) + suffix;
  if (underscore != std::string_view::npos) f.name += "_b" + std::to_string(f.bias);
  // "e4m3ieee" must not be named "e4m3", which names the OCP preset: a name
  // has to parse back to its format.
  if (f.specials == Specials::ieee && find_alias(f.name)) f.name += "ieee";
  // A spec that spells out a preset is that preset (e5m2 is OCP E5M2).
  for (const Format& preset : preset_formats()) {
    Format same = f;
    same.name = preset.name;
    same.pad_bits = preset.pad_bits;
    same.storage_bits = preset.storage_bits;
    if (same == preset) return preset;
  }
  return f;
}

Format format_from_string(std::string_view text) {
  std::string error;
  auto f = parse_format(text, &error);
  if (!f) throw std::invalid_argument(error);
  return *f;
}

std::vector<Format> format_list_from_string(std::string_view text) {
  std::vector<Format> out;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view item = text.substr(start, comma - start);
    if (item == "p3109") {
      out.insert(out.end(), p3109_formats().begin(), p3109_formats().end());
    } else if (!item.empty()) {
      out.push_back(format_from_string(item));
    }
    start = comma + 1;
  }
  if (out.empty()) throw std::invalid_argument("empty format list '" + std::string(text) + "'");
  return out;
}

}  // namespace fmtcheck
