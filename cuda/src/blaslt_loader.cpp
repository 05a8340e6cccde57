// Built only with a toolkit that has cuBLASLt, as blaslt_gemm.cpp's calls
// are: without <cublasLt.h> there are no types to load into.
#ifdef FMTCHECK_HAS_CUBLASLT
#include "blaslt_loader.hpp"

#include <dlfcn.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace fmtcheck::cuda::detail {

const char* const toolkit_blaslt_path = FMTCHECK_CUBLASLT_PATH;

BlasLt load_blaslt(const char* library, const char* fallback) {
  // Closed again if a function is missing; kept open once all are found.
  std::unique_ptr<void, int (*)(void*)> lib(dlopen(library, RTLD_NOW | RTLD_LOCAL), dlclose);
  if (!lib) {
    std::string why = std::string("cuBLASLt: cannot load ") + library + ": " + dlerror();
    if (fallback == nullptr) throw std::runtime_error(why);
    lib.reset(dlopen(fallback, RTLD_NOW | RTLD_LOCAL));
    if (!lib) throw std::runtime_error(why + "; nor " + fallback + ": " + dlerror());
    library = fallback;  // the one the errors below name
  }
  BlasLt api;
  const auto resolve = [&](auto& pointer, const char* name) {
    void* p = dlsym(lib.get(), name);
    if (!p) throw std::runtime_error(std::string("cuBLASLt: ") + library + " has no " + name);
    pointer = reinterpret_cast<std::remove_reference_t<decltype(pointer)>>(p);
  };
#define FMTCHECK_BLASLT_RESOLVE(name) resolve(api.name, "cublasLt" #name);
  FMTCHECK_BLASLT_FUNCTIONS(FMTCHECK_BLASLT_RESOLVE)
#undef FMTCHECK_BLASLT_RESOLVE
  lib.release();  // never closed: the pointers point into it
  return api;
}

const BlasLt& blaslt() {
  // A static's initialiser runs once even when threads race; one that throws
  // leaves the next call to try again.
  static const BlasLt api = load_blaslt(FMTCHECK_CUBLASLT_LIBRARY, toolkit_blaslt_path);
  return api;
}

}  // namespace fmtcheck::cuda::detail
#endif
