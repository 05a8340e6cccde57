// Everything fmtcheck offers, in one include. The layers, each a folder:
//   core/         formats, policy, flags, exact values, the rounding core, decoding
//   arith/        correctly rounded arithmetic, dot products, value types
//   batch/        whole tensors converted and decoded (SIMD where proven)
//   tensor_core/  tensor-core accumulation models and GEMM
//   io/           tensor files (.npy, safetensors, raw, CSV)
//   analysis/     per-tensor measures and scaling recipes
// The Eigen and {fmt} adapters (arith/eigen.hpp, arith/fmt.hpp) need those
// libraries and are included on their own.
#pragma once

#include "fmtcheck/analysis/analysis.hpp"
#include "fmtcheck/analysis/scaling.hpp"
#include "fmtcheck/analysis/scaling_replay.hpp"
#include "fmtcheck/analysis/tensor_analysis.hpp"
#include "fmtcheck/arith/arithmetic.hpp"
#include "fmtcheck/arith/dot.hpp"
#include "fmtcheck/arith/types.hpp"
#include "fmtcheck/batch/convert_batch.hpp"
#include "fmtcheck/batch/convert_parallel.hpp"
#include "fmtcheck/batch/decode_batch.hpp"
#include "fmtcheck/batch/elementwise.hpp"
#include "fmtcheck/core/convert.hpp"
#include "fmtcheck/core/decode.hpp"
#include "fmtcheck/core/exact_value.hpp"
#include "fmtcheck/core/facts.hpp"
#include "fmtcheck/core/flags.hpp"
#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/nan_rules.hpp"
#include "fmtcheck/core/parse_number.hpp"
#include "fmtcheck/core/policy.hpp"
#include "fmtcheck/core/policy_text.hpp"
#include "fmtcheck/core/random.hpp"
#include "fmtcheck/core/round_to_format.hpp"
#include "fmtcheck/core/stochastic_outcomes.hpp"
#include "fmtcheck/core/unpacked.hpp"
#include "fmtcheck/io/tensor_io.hpp"
#include "fmtcheck/tensor_core/gemm.hpp"
#include "fmtcheck/tensor_core/tensor_core.hpp"
