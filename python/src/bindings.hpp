// The extension's parts, one per area of the library.
#pragma once

#include <nanobind/nanobind.h>

namespace fmtcheck::python {

void bind_convert(nanobind::module_& m);
void bind_formats(nanobind::module_& m);
void bind_analysis(nanobind::module_& m);
void bind_arith(nanobind::module_& m);
void bind_tensor_core(nanobind::module_& m);
void bind_fresh_memory(nanobind::module_& m);
void bind_dlpack_view(nanobind::module_& m);
void bind_recipe_casts(nanobind::module_& m);
void bind_trainer(nanobind::module_& m);
void bind_exact_math(nanobind::module_& m);
void bind_recipe_optimizer(nanobind::module_& m);
void bind_gpu(nanobind::module_& m);

}  // namespace fmtcheck::python
