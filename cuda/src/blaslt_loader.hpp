// cuBLASLt, opened with dlopen the first time `hw gemm` needs it. Linked
// directly, the library is loaded at every start of the CLI (~0.1 s and
// ~200 MiB of RSS) though no other command calls it. <cublasLt.h> still
// gives the types.
#pragma once

#include <cublasLt.h>

namespace fmtcheck::cuda::detail {

// Every cuBLASLt function blaslt_gemm.cpp calls, without the "cublasLt"
// prefix: one list for both the pointers and their lookup.
#define FMTCHECK_BLASLT_FUNCTIONS(X)            \
  X(GetStatusString)                            \
  X(Create)                                     \
  X(Destroy)                                    \
  X(MatmulDescCreate)                           \
  X(MatmulDescDestroy)                          \
  X(MatmulDescSetAttribute)                     \
  X(MatrixLayoutCreate)                         \
  X(MatrixLayoutDestroy)                        \
  X(MatmulPreferenceCreate)                     \
  X(MatmulPreferenceDestroy)                    \
  X(MatmulPreferenceSetAttribute)               \
  X(MatmulAlgoGetHeuristic)                     \
  X(MatmulAlgoConfigSetAttribute)               \
  X(MatmulAlgoCheck)                            \
  X(Matmul)

// api.Create is cublasLtCreate from the loaded library, and so on.
struct BlasLt {
#define FMTCHECK_BLASLT_POINTER(name) decltype(&cublasLt##name) name = nullptr;
  FMTCHECK_BLASLT_FUNCTIONS(FMTCHECK_BLASLT_POINTER)
#undef FMTCHECK_BLASLT_POINTER
};

// Opens `library`, or `fallback` when given and `library` does not load,
// and resolves every function above; throws std::runtime_error naming each
// library tried and why it did not load, or the first function it lacks.
// The library stays loaded for the life of the process. The names are
// parameters so that tests can point them elsewhere.
BlasLt load_blaslt(const char* library, const char* fallback = nullptr);

// The toolkit's own copy, by absolute path: its library directory as CMake
// found it at configure time, for machines whose loader search path lacks
// that directory (a linked binary had it as its RUNPATH).
extern const char* const toolkit_blaslt_path;

// The cuBLASLt of the toolkit this was built with: libcublasLt.so.MAJOR as
// the loader finds it, else toolkit_blaslt_path; loaded on the first call,
// once even when threads race. Throws as load_blaslt, at every call until a
// load succeeds.
const BlasLt& blaslt();

}  // namespace fmtcheck::cuda::detail
