// fmtcheck._core: the library's functions over arrays, for the Python front
// in fmtcheck/__init__.py. std::invalid_argument (bad formats, policies and
// options, in the CLI's words) arrives in Python as ValueError.
#include "bindings.hpp"

NB_MODULE(_core, m) {
  m.doc() = "fmtcheck's C++ library (use the fmtcheck package, not this module)";
  fmtcheck::python::bind_convert(m);
  fmtcheck::python::bind_formats(m);
  fmtcheck::python::bind_analysis(m);
  fmtcheck::python::bind_arith(m);
  fmtcheck::python::bind_tensor_core(m);
  fmtcheck::python::bind_fresh_memory(m);
  fmtcheck::python::bind_dlpack_view(m);
  fmtcheck::python::bind_recipe_casts(m);
  fmtcheck::python::bind_trainer(m);
  fmtcheck::python::bind_exact_math(m);
  fmtcheck::python::bind_recipe_optimizer(m);
  fmtcheck::python::bind_gpu(m);
}
