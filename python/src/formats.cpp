// ranges and values: the facts of formats, every code of a small one.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include "arrays.hpp"
#include "bindings.hpp"
#include "fmtcheck/batch/decode_batch.hpp"
#include "fmtcheck/core/decode.hpp"
#include "fmtcheck/core/facts.hpp"

namespace fmtcheck::python {
namespace {

nb::list ranges(const std::optional<std::string>& list) {
  const std::vector<Format> formats =
      list ? format_list_from_string(*list) : std::vector<Format>(preset_formats().begin(), preset_formats().end());
  nb::list out;
  for (const Format& f : formats) out.append(record_dict(facts_record(f)));
  return out;
}

nb::dict values(const std::string& name) {
  const Format f = format_from_string(name);
  nb::list codes, classes, exact, value;
  for (const std::uint64_t bits : every_code(f)) {
    codes.append(bits);
    classes.append(std::string(to_string(classify(f, bits))));
    exact.append(to_exact_decimal(f, bits));
    value.append(to_double(f, bits));
  }
  nb::dict d;
  d["code"] = codes;
  d["class"] = classes;
  d["exact"] = exact;
  d["value"] = value;
  return d;
}

}  // namespace

void bind_formats(nb::module_& m) {
  m.def("ranges", &ranges, nb::arg("formats").none() = nb::none(),
        "The facts of each format (default: every preset), as `fmtcheck ranges --json` lists them.");
  m.def("values", &values, nb::arg("format"),
        "Every code of a format of at most 16 bits: code, class, exact decimal value, value.");
  m.def("canonical_name", [](const std::string& f) { return format_from_string(f).name; }, nb::arg("format"),
        "The canonical name of a preset, alias or spec (\"float8_e4m3fn\" -> \"e4m3\").");
  m.def("storage_bits", [](const std::string& f) { return format_from_string(f).storage_bits; }, nb::arg("format"),
        "The width of a format's container: 8, 16, 32 or 64.");
  m.def("float32_holds", [](const std::string& f) { return float32_holds(format_from_string(f)); }, nb::arg("format"), "Whether float32 holds every value of the format (decode then gives float32).");
}

}  // namespace fmtcheck::python
