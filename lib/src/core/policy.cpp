// Names of the policy axes, shared by the CLI, the reports and the tests.
#include "fmtcheck/core/policy.hpp"

#include <array>
#include <utility>

namespace fmtcheck {
namespace {

template <typename E, std::size_t N>
std::optional<E> lookup(const std::array<std::pair<std::string_view, E>, N>& table, std::string_view s) {
  for (const auto& [name, value] : table) {
    if (name == s) return value;
  }
  return std::nullopt;
}

template <typename E, std::size_t N>
std::string_view name_of(const std::array<std::pair<std::string_view, E>, N>& table, E e) {
  for (const auto& [name, value] : table) {
    if (value == e) return name;
  }
  return "?";
}

constexpr std::array<std::pair<std::string_view, Rounding>, 10> kRounding{{
    {"rne", Rounding::rne}, {"rna", Rounding::rna}, {"rtz", Rounding::rtz}, {"rup", Rounding::rup},
    {"rdn", Rounding::rdn}, {"rto", Rounding::rto}, {"sr", Rounding::sr}, {"sr-rne", Rounding::sr_rne},
    {"sr-rna", Rounding::sr_rna}, {"sr-rno", Rounding::sr_rno}}};
// The first name of each value is the one fmtcheck prints; P3109's names
// follow in lower case.
constexpr std::array<std::pair<std::string_view, Overflow>, 6> kOverflow{{
    {"sat", Overflow::sat}, {"nosat", Overflow::nosat}, {"satprop", Overflow::satprop},
    {"satfinite", Overflow::sat}, {"ovfinf", Overflow::nosat}, {"satpropagate", Overflow::satprop}}};
constexpr std::array<std::pair<std::string_view, Subnormals>, 4> kSubnormals{{
    {"keep", Subnormals::keep}, {"ftz", Subnormals::ftz}, {"daz", Subnormals::daz}, {"ftz+daz", Subnormals::ftz_daz}}};
constexpr std::array<std::pair<std::string_view, Tininess>, 2> kTininess{{{"after", Tininess::after}, {"before", Tininess::before}}};
constexpr std::array<std::pair<std::string_view, NanConvention>, 10> kNan{{
    {"ieee", NanConvention::ieee}, {"cuda", NanConvention::cuda}, {"canonical", NanConvention::canonical},
    {"x86", NanConvention::x86}, {"arm", NanConvention::arm}, {"numpy", NanConvention::numpy},
    {"ml_dtypes", NanConvention::ml_dtypes}, {"torch", NanConvention::torch}, {"arm-dn", NanConvention::canonical},
    {"riscv", NanConvention::canonical}}};

}  // namespace

std::string_view to_string(Rounding r) { return name_of(kRounding, r); }
std::string_view to_string(Overflow o) { return name_of(kOverflow, o); }
std::string_view to_string(Subnormals s) { return name_of(kSubnormals, s); }
std::string_view to_string(Tininess t) { return name_of(kTininess, t); }
std::string_view to_string(NanConvention n) { return name_of(kNan, n); }

std::optional<Rounding> parse_rounding(std::string_view s) { return lookup(kRounding, s); }
std::optional<Overflow> parse_overflow(std::string_view s) { return lookup(kOverflow, s); }
std::optional<Subnormals> parse_subnormals(std::string_view s) { return lookup(kSubnormals, s); }
std::optional<Tininess> parse_tininess(std::string_view s) { return lookup(kTininess, s); }
std::optional<NanConvention> parse_nan_convention(std::string_view s) { return lookup(kNan, s); }

std::string describe(const Policy& p) {
  std::string s;
  s.append(to_string(p.rounding)).append(",").append(to_string(p.overflow)).append(",");
  s.append(to_string(p.subnormals)).append(",").append(to_string(p.tininess)).append(",");
  s.append(to_string(p.nan));
  return s;
}

}  // namespace fmtcheck
