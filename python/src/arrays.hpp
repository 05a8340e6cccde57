// Arrays as the bindings receive them: any C-contiguous CPU array, from
// numpy or any DLPack producer (torch, JAX), read in place. The Python front
// (fmtcheck/__init__.py) hands over ml_dtypes arrays as views of their
// unsigned codes, with the format's name in `from`.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "fmtcheck/batch/convert_parallel.hpp"
#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/policy_text.hpp"
#include "fmtcheck/core/record.hpp"
#include "fmtcheck/io/tensor_io.hpp"

namespace fmtcheck::python {

namespace nb = nanobind;

using Array = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>;
using OutArray = nb::ndarray<nb::c_contig, nb::device::cpu>;

// The values of `a` with their format: float32, float64, float16, bfloat16
// and DLPack's FP8 types by their dtype, unsigned codes by `from` (required
// for them).
// Throws TypeError for any other dtype, ValueError for a bad `from`.
BatchSource batch_source(const Array& a, const std::optional<std::string>& from);

// The format a dtype without a numpy type names: "bf16" for bfloat16, and for
// DLPack's FP8 types the format of ml_dtypes' type of the same name; nullopt
// for every other dtype.
std::optional<std::string> dtype_format(const Array& a);

// A dtype in words, for errors: "int32", "float6_e2m3fn (6 bits)".
std::string dtype_name(const Array& a);

// The same as a tensor of memory_tensors().
MemoryTensor memory_tensor(std::string name, const Array& a, const std::optional<std::string>& from);

// Unsigned codes of any width widened to 64 bits (the arithmetic's operands).
std::vector<std::uint64_t> codes_of(const Array& a, const char* what);

// The output's codes, of width `bits`, as long as `n`; TypeError/ValueError otherwise.
template <typename T>
std::span<T> out_span(OutArray& out, std::size_t n);

// The policy keywords every converting function takes.
#define FMTCHECK_POLICY_ARGS                                                                                      \
  nb::arg("round") = "rne", nb::arg("overflow") = "nosat", nb::arg("subnormals") = "keep",                      \
      nb::arg("tininess") = "after", nb::arg("nan") = "ieee", nb::arg("sr_bits") = 0
PolicyText policy_text(const std::string& round, const std::string& overflow, const std::string& subnormals,
                       const std::string& tininess, const std::string& nan, int sr_bits);

// A library record as a dict, its fields in order.
nb::dict record_dict(const Record& record);

// Flag counts as {"values": n, "inexact": n, ...}.
nb::dict flag_dict(const FlagCounts& counts);

}  // namespace fmtcheck::python
