// unpack() of C++'s own floating types (unpacked.hpp decodes any format's bits).
#include <bit>

#include "fmtcheck/core/unpacked.hpp"

namespace fmtcheck {

Unpacked unpack(float value) { return unpack_float32(std::bit_cast<std::uint32_t>(value)); }
Unpacked unpack(double x) { return unpack(formats::fp64, std::bit_cast<std::uint64_t>(x)); }

}  // namespace fmtcheck
