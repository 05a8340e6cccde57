// Shared by the reference block (tensor_core.cpp) and the GEMM kernel
// (gemm.cpp): how a block's exact fixed-point sum becomes output bits, so
// that both round through round_to_format in exactly the same way.
#pragma once

#include <cstdint>

#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/policy.hpp"
#include "fmtcheck/core/unpacked.hpp"
#include "fmtcheck/tensor_core/tensor_core.hpp"

namespace fmtcheck::detail {

struct BlockRounding {
  Format target;  // out itself, or on Ada/Hopper FP8 an fp32 with 13 fraction bits (same container)
  Policy policy;
};
BlockRounding block_rounding(const DotModel& model, const Format& out);

// sum * 2^unit as an exact unpacked value; sum != 0.
Unpacked fixed_point_value(std::int64_t sum, int unit);

}  // namespace fmtcheck::detail
