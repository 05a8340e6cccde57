#include "fmtcheck/cuda/gemm_case_file.hpp"

#include <bit>
#include <charconv>
#include <fmt/format.h>
#include <map>
#include <utility>
#include <stdexcept>

#include "fmtcheck/core/format.hpp"

namespace fmtcheck::cuda {
namespace {

const Format* format_named(const std::string& name) {
  for (const Format* f : {&formats::fp16, &formats::bf16, &formats::tf32, &formats::e4m3, &formats::fp32}) {
    if (f->name == name) return f;
  }
  throw std::invalid_argument("gemm cases: unknown format '" + name + "'");
}

std::string hex_words(const std::vector<std::uint32_t>& v) {
  std::string s;
  s.reserve(v.size() * 9);
  for (const std::uint32_t w : v) s += fmt::format(" {:08x}", w);
  return s;
}

std::vector<std::uint32_t> parse_words(std::string_view text, const std::string& key) {
  std::vector<std::uint32_t> out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && text[i] == ' ') ++i;
    if (i == text.size()) break;
    std::uint32_t w = 0;
    const auto [end, ec] = std::from_chars(text.data() + i, text.data() + text.size(), w, 16);
    if (ec != std::errc{} || (end != text.data() + text.size() && *end != ' ')) {
      throw std::invalid_argument("gemm cases: line '" + key + "' holds a word that is not hex");
    }
    out.push_back(w);
    i = static_cast<std::size_t>(end - text.data());
  }
  return out;
}

}  // namespace

GemmCases gemm_block(const BlasLtGemm& g, std::string model, std::size_t promote_every, const GemmOperands& x,
                     const std::vector<std::uint32_t>& d, std::size_t rows, std::size_t cols) {
  if (rows > x.m || cols > x.n || d.size() != x.m * x.n) throw std::invalid_argument("gemm_block: block outside the GEMM");
  GemmCases c{g, std::move(model), promote_every, {rows, cols, x.k, {}, {}, {}}, {}};
  for (std::size_t r = 0; r < rows; ++r) {
    c.x.a.insert(c.x.a.end(), x.a.begin() + static_cast<std::ptrdiff_t>(r * x.k),
                 x.a.begin() + static_cast<std::ptrdiff_t>((r + 1) * x.k));
    for (std::size_t col = 0; col < cols; ++col) {
      c.x.c.push_back(x.c[r * x.n + col]);
      c.d.push_back(d[r * x.n + col]);
    }
  }
  for (std::size_t j = 0; j < x.k; ++j) {
    for (std::size_t col = 0; col < cols; ++col) c.x.b.push_back(x.b[j * x.n + col]);
  }
  return c;
}

std::string gemm_cases_text(const GemmCases& c) {
  std::vector<std::uint32_t> c_bits;
  for (const float v : c.x.c) c_bits.push_back(std::bit_cast<std::uint32_t>(v));
  return fmt::format(
      "model {}\ntype {}\nout {}\nfast_accum {}\nscale_a {}\nscale_b {}\nscale_d {}\npromote_every {}\nm {}\nn {}\nk {}\n"
      "a{}\nb{}\nc{}\nd{}\n",
      c.model, c.gemm.input->name, c.gemm.output->name, c.gemm.fast_accum ? 1 : 0, c.gemm.scale_a, c.gemm.scale_b,
      c.gemm.scale_d, c.promote_every, c.x.m, c.x.n, c.x.k, hex_words(c.x.a), hex_words(c.x.b), hex_words(c_bits),
      hex_words(c.d));
}

GemmCases parse_gemm_cases(std::string_view text) {
  std::map<std::string, std::string, std::less<>> fields;
  while (!text.empty()) {
    const std::size_t eol = text.find('\n');
    const std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view{} : text.substr(eol + 1);
    if (line.empty()) continue;
    const std::size_t space = line.find(' ');
    const std::string key(line.substr(0, space));
    fields[key] = space == std::string_view::npos ? "" : std::string(line.substr(space + 1));
  }
  const auto field = [&](const char* key) -> const std::string& {
    const auto it = fields.find(key);
    if (it == fields.end()) throw std::invalid_argument(std::string("gemm cases: no line '") + key + "'");
    return it->second;
  };
  const auto number = [&](const char* key) {
    try {
      return std::stod(field(key));
    } catch (const std::logic_error&) {
      throw std::invalid_argument(std::string("gemm cases: line '") + key + "' is not a number");
    }
  };
  // Counts are decimal integers; a size product past 2^32 words is no case
  // file hw gemm writes (and would wrap when multiplied).
  const auto count = [&](const char* key) {
    const std::string& text = field(key);
    std::size_t n = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc{} || end != text.data() + text.size() || n > 0xFFFFFFFFu) {
      throw std::invalid_argument(std::string("gemm cases: line '") + key + "' is not a count");
    }
    return n;
  };
  GemmCases c;
  c.model = field("model");
  c.gemm.input = format_named(field("type"));
  c.gemm.output = format_named(field("out"));
  c.gemm.fast_accum = number("fast_accum") != 0;
  c.gemm.scale_a = static_cast<float>(number("scale_a"));
  c.gemm.scale_b = static_cast<float>(number("scale_b"));
  c.gemm.scale_d = static_cast<float>(number("scale_d"));
  c.promote_every = count("promote_every");
  c.x.m = count("m");
  c.x.n = count("n");
  c.x.k = count("k");
  c.x.a = parse_words(field("a"), "a");
  c.x.b = parse_words(field("b"), "b");
  for (const std::uint32_t w : parse_words(field("c"), "c")) c.x.c.push_back(std::bit_cast<float>(w));
  c.d = parse_words(field("d"), "d");
  if (c.x.a.size() != c.x.m * c.x.k || c.x.b.size() != c.x.k * c.x.n || c.x.c.size() != c.x.m * c.x.n ||
      c.d.size() != c.x.m * c.x.n) {
    throw std::invalid_argument("gemm cases: the sizes of a, b, c or d disagree with m, n and k");
  }
  return c;
}

}  // namespace fmtcheck::cuda
