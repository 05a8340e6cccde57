// Everything fmtcheck offers, in one include.
#pragma once

#include "fmtcheck/arithmetic.hpp"
#include "fmtcheck/convert.hpp"
#include "fmtcheck/decode.hpp"
#include "fmtcheck/dot.hpp"
#include "fmtcheck/exact_value.hpp"
#include "fmtcheck/facts.hpp"
#include "fmtcheck/flags.hpp"
#include "fmtcheck/format.hpp"
#include "fmtcheck/nan_rules.hpp"
#include "fmtcheck/parse_number.hpp"
#include "fmtcheck/policy.hpp"
#include "fmtcheck/random.hpp"
#include "fmtcheck/round_to_format.hpp"
#include "fmtcheck/types.hpp"
#include "fmtcheck/unpacked.hpp"
