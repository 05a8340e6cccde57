// Element-wise arithmetic over arrays of codes, with the flags counted.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include "arrays.hpp"
#include "bindings.hpp"
#include "fmtcheck/batch/elementwise.hpp"

namespace fmtcheck::python {
namespace {

nb::dict apply(Operation op, const std::string& format, const Array& a, const std::optional<Array>& b,
               const std::optional<Array>& c, OutArray out, const std::string& round, const std::string& overflow,
               const std::string& subnormals, const std::string& tininess, const std::string& nan, int sr_bits,
               std::uint32_t sr_random, unsigned threads) {
  const Format f = format_from_string(format);
  PolicyText text = policy_text(round, overflow, subnormals, tininess, nan, sr_bits);
  text.sr_random = sr_random;
  const Policy p = policy_from_text(text);
  const std::vector<std::uint64_t> x = codes_of(a, "a");
  const std::vector<std::uint64_t> y = b ? codes_of(*b, "b") : std::vector<std::uint64_t>{};
  const std::vector<std::uint64_t> z = c ? codes_of(*c, "c") : std::vector<std::uint64_t>{};
  const std::span<std::uint64_t> result = out_span<std::uint64_t>(out, x.size());
  FlagCounts counts;
  {
    nb::gil_scoped_release unlocked;
    counts = elementwise(op, f, x, y, z, p, result, threads);
  }
  return flag_dict(counts);
}

}  // namespace

void bind_arith(nb::module_& m) {
  nb::enum_<Operation>(m, "Operation")
      .value("add", Operation::add)
      .value("sub", Operation::sub)
      .value("mul", Operation::mul)
      .value("div", Operation::div)
      .value("fma", Operation::fma)
      .value("sqrt", Operation::sqrt)
      .value("minimum", Operation::minimum)
      .value("maximum", Operation::maximum);
  m.def("elementwise_into", &apply, default_fp, nb::arg("op"), nb::arg("format"), nb::arg("a"), nb::arg("b").none(), nb::arg("c").none(),
        nb::arg("out"), FMTCHECK_POLICY_ARGS, nb::arg("sr_random") = 0, nb::arg("threads") = 0,
        "out[i] = op(a[i], b[i], c[i]) on codes of `format`, each correctly rounded under the policy, into uint64 `out`;\n"
        "returns the flag counts.");
}

}  // namespace fmtcheck::python
