// cuBLASLt on the device: the one file that calls the library (loaded on
// first use by blaslt_loader.cpp).
//
// cuBLASLt is column-major and FP8 takes only the "TN" form (A transposed,
// both operands K-major), so every type runs as: A given as K×M (row-major
// M×K, transposed by the op), B as K×N (column n's K values one after
// another), C and D as M×N column-major; the host transposes B, C and D.
#include "fmtcheck/cuda/blaslt_gemm.hpp"

#include <stdexcept>
#include <string>

#ifndef FMTCHECK_HAS_CUBLASLT
namespace fmtcheck::cuda {

std::vector<std::uint32_t> run_blaslt_gemm(const BlasLtGemm& g, const GemmOperands& x, std::string*) {
  check_gemm(g, x);
  throw std::runtime_error("this build has no cuBLASLt (the CUDA toolkit it was built with lacks it)");
}

}  // namespace fmtcheck::cuda
#else
#include <cuda_runtime.h>

#include <cstring>

#include "blaslt_loader.hpp"
#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "fmtcheck/cuda/device.hpp"

namespace fmtcheck::cuda {
namespace {

using detail::blaslt;

void check_lt(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string("cuBLASLt ") + what + ": " + blaslt().GetStatusString(s));
}

// A cuBLASLt object, destroyed by the loaded library's own function.
template <class T>
struct Handle {
  cublasStatus_t (*destroy)(T);
  T h = nullptr;
  ~Handle() {
    if (h) destroy(h);
  }
};

cudaDataType_t data_type(const Format& f) {
  if (f == formats::fp16) return CUDA_R_16F;
  if (f == formats::bf16) return CUDA_R_16BF;
  if (f == formats::e4m3) return CUDA_R_8F_E4M3;
  return CUDA_R_32F;  // fp32, and tf32 in fp32 words
}

// Container bits as a byte array of the element width cuBLASLt reads.
std::vector<unsigned char> packed(const Format& f, const std::vector<std::uint32_t>& words) {
  const auto size = static_cast<std::size_t>(f.storage_bits / 8);  // tf32: fp32 words
  std::vector<unsigned char> out(words.size() * size);
  for (std::size_t i = 0; i < words.size(); ++i) std::memcpy(&out[i * size], &words[i], size);  // little-endian
  return out;
}

template <class T>
void set(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t a, const T& v, const char* what) {
  check_lt(blaslt().MatmulDescSetAttribute(d, a, &v, sizeof(v)), what);
}

}  // namespace

std::vector<std::uint32_t> run_blaslt_gemm(const BlasLtGemm& g, const GemmOperands& x, std::string* split_k) {
  check_gemm(g, x);
  require_device();
  const detail::BlasLt& api = blaslt();  // a missing library fails here, before any allocation
  const std::size_t m = x.m, n = x.n, k = x.k;
  std::vector<std::uint32_t> b_columns(k * n);
  for (std::size_t j = 0; j < k; ++j) {
    for (std::size_t col = 0; col < n; ++col) b_columns[col * k + j] = x.b[j * n + col];
  }
  std::vector<float> c_columns(m * n);
  for (std::size_t row = 0; row < m; ++row) {
    for (std::size_t col = 0; col < n; ++col) c_columns[col * m + row] = x.c[row * n + col];
  }
  const bool fp8_out = *g.output == formats::e4m3;
  const std::vector<unsigned char> a_bytes = packed(*g.input, x.a), b_bytes = packed(*g.input, b_columns);
  detail::DeviceBuffer<unsigned char> a{std::span<const unsigned char>(a_bytes)}, b{std::span<const unsigned char>(b_bytes)};
  // An e4m3 D takes a bf16 C (cuBLASLt's FP8 rule), unused with beta = 0.
  detail::DeviceBuffer<float> c(std::span<const float>(fp8_out ? std::vector<float>(m * n / 2 + 1, 0.0f) : c_columns));
  detail::DeviceBuffer<unsigned char> d(m * n * (fp8_out ? 1 : 4));
  // One allocation per scale: each pointer starts an allocation of its own.
  detail::DeviceBuffer<float> scale_a(std::span<const float>(&g.scale_a, 1)), scale_b(std::span<const float>(&g.scale_b, 1)),
      scale_d(std::span<const float>(&g.scale_d, 1));
  constexpr std::size_t workspace_bytes = std::size_t{32} << 20;
  detail::DeviceBuffer<unsigned char> workspace(workspace_bytes);

  Handle<cublasLtHandle_t> lt{api.Destroy};
  check_lt(api.Create(&lt.h), "create");
  Handle<cublasLtMatmulDesc_t> op{api.MatmulDescDestroy};
  const cublasComputeType_t compute = *g.input == formats::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  check_lt(api.MatmulDescCreate(&op.h, compute, CUDA_R_32F), "matmul descriptor");
  set(op.h, CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_T, "transa");
  set(op.h, CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N, "transb");
  if (g.fp8()) {
    set(op.h, CUBLASLT_MATMUL_DESC_FAST_ACCUM, static_cast<std::int8_t>(g.fast_accum ? 1 : 0), "fast accum");
    // Scales of 1 are not passed: cuBLASLt then multiplies by nothing, and an
    // H100's cuBLASLt 13.1 refused every FP8 matmul given scale pointers.
    if (g.scale_a != 1.0f || g.scale_b != 1.0f) {
      set(op.h, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, static_cast<const void*>(scale_a.get()), "A scale");
      set(op.h, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, static_cast<const void*>(scale_b.get()), "B scale");
    }
    if (fp8_out && g.scale_d != 1.0f) set(op.h, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, static_cast<const void*>(scale_d.get()), "D scale");
  }
  using Layout = Handle<cublasLtMatrixLayout_t>;
  Layout la{api.MatrixLayoutDestroy}, lb{api.MatrixLayoutDestroy}, lc{api.MatrixLayoutDestroy},
      ld{api.MatrixLayoutDestroy};
  const cudaDataType_t in = data_type(*g.input);
  check_lt(api.MatrixLayoutCreate(&la.h, in, k, m, k), "A layout");
  check_lt(api.MatrixLayoutCreate(&lb.h, in, k, n, k), "B layout");
  check_lt(api.MatrixLayoutCreate(&lc.h, fp8_out ? CUDA_R_16BF : CUDA_R_32F, m, n, m), "C layout");
  check_lt(api.MatrixLayoutCreate(&ld.h, fp8_out ? CUDA_R_8F_E4M3 : CUDA_R_32F, m, n, m), "D layout");

  Handle<cublasLtMatmulPreference_t> pref{api.MatmulPreferenceDestroy};
  check_lt(api.MatmulPreferenceCreate(&pref.h), "preference");
  check_lt(api.MatmulPreferenceSetAttribute(pref.h, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes,
                                            sizeof(workspace_bytes)),
           "workspace");
  // Up to 16 candidate algorithms, best first. K is summed in order within one
  // kernel only without split-K: the first candidate that runs with one
  // slice is used; when none does, the first that runs as cuBLASLt
  // configured it (and split_k says so). Some candidates pass
  // MatmulAlgoCheck and are still refused by Matmul (seen for FP8 on an H100).
  constexpr int wanted = 16;
  cublasLtMatmulHeuristicResult_t found[wanted] = {};
  int count = 0;
  check_lt(api.MatmulAlgoGetHeuristic(lt.h, op.h, la.h, lb.h, lc.h, ld.h, pref.h, wanted, found, &count), "heuristic");
  if (count == 0) throw std::runtime_error("cuBLASLt has no algorithm for " + g.name() + " on this GPU");
  const float alpha = 1.0f, beta = fp8_out ? 0.0f : 1.0f;
  const auto run = [&](const cublasLtMatmulAlgo_t& algo) {
    return api.Matmul(lt.h, op.h, &alpha, a.get(), la.h, b.get(), lb.h, &beta, c.get(), lc.h, d.get(), ld.h, &algo,
                      workspace.get(), workspace_bytes, nullptr);
  };
  const std::int32_t one_slice = 1;
  cublasStatus_t status = CUBLAS_STATUS_NOT_SUPPORTED;
  for (int i = 0; i < count && status != CUBLAS_STATUS_SUCCESS; ++i) {
    cublasLtMatmulAlgo_t algo = found[i].algo;
    cublasLtMatmulHeuristicResult_t checked{};
    if (api.MatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &one_slice, sizeof(one_slice)) ==
            CUBLAS_STATUS_SUCCESS &&
        api.MatmulAlgoCheck(lt.h, op.h, la.h, lb.h, lc.h, ld.h, &algo, &checked) == CUBLAS_STATUS_SUCCESS) {
      status = run(algo);
    }
  }
  if (status == CUBLAS_STATUS_SUCCESS) {
    if (split_k) *split_k = "split-K off";
  } else {
    for (int i = 0; i < count && status != CUBLAS_STATUS_SUCCESS; ++i) status = run(found[i].algo);
    if (split_k) *split_k = "cuBLASLt's own split-K (switching it off was refused)";
  }
  check_lt(status, "matmul");
  const std::vector<unsigned char> d_bytes = d.to_host();
  std::vector<std::uint32_t> out(m * n);
  for (std::size_t row = 0; row < m; ++row) {
    for (std::size_t col = 0; col < n; ++col) {
      std::uint32_t v = 0;
      std::memcpy(&v, &d_bytes[(col * m + row) * (fp8_out ? 1 : 4)], fp8_out ? 1 : 4);
      out[row * n + col] = v;
    }
  }
  return out;
}

}  // namespace fmtcheck::cuda
#endif
