// The extension's parts, one per area of the library.
#pragma once

#include <nanobind/nanobind.h>

#include <cfenv>

namespace fmtcheck::python {

// fmtcheck's float arithmetic (GEMM epilogues and promotions, FMA chains,
// the trainer's ops, scaling, analysis in double) is IEEE's in the default
// floating-point environment. A Python caller's thread may be in another:
// torch.set_flush_denormal(True) turns on flush-to-zero and
// denormals-are-zero, which would flush every subnormal the emulated
// hardware keeps. The extension's computing functions run in the default
// environment (threads they start inherit it) and give the caller's back,
// its exception flags untouched: `default_fp` in their definitions.
struct DefaultFloatEnvironment {
  std::fenv_t caller{};
  DefaultFloatEnvironment() {
    std::fegetenv(&caller);
    std::fesetenv(FE_DFL_ENV);
  }
  ~DefaultFloatEnvironment() { std::fesetenv(&caller); }
  DefaultFloatEnvironment(const DefaultFloatEnvironment&) = delete;
  DefaultFloatEnvironment& operator=(const DefaultFloatEnvironment&) = delete;
};
inline constexpr nanobind::call_guard<DefaultFloatEnvironment> default_fp{};

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
