// Comparing the library's arithmetic with the reference, one case at a time.
#pragma once

#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <string>

#include "fmtcheck/arith/arithmetic.hpp"
#include "policies.hpp"
#include "reference.hpp"

namespace fmtcheck::testing {

inline std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// True when they agree; otherwise fills `what` with a readable account.
inline bool agrees(const Conversion& got, const reference::Expected& want, const char* op, const Format& f,
                   const Policy& p, std::initializer_list<std::uint64_t> operands, std::string& what) {
  if (got.bits == want.bits && got.flags == want.flags) return true;
  // Appended piece by piece: g++ 12 warns on " " + std::string&& with a
  // false -Wrestrict inside std::string's insert.
  what = std::string(op) + " " + f.name + " [" + policy_text(p) + "]";
  for (auto x : operands) {
    what += " ";
    what += hex(x);
  }
  what += ": got ";
  what += hex(got.bits);
  what += " ";
  what += describe(got.flags);
  what += ", want ";
  what += hex(want.bits);
  what += " ";
  what += describe(want.flags);
  return false;
}

// Every 8-bit (and narrower) preset: the formats proven exhaustively.
inline std::vector<Format> small_formats() {
  return {formats::e4m3, formats::e5m2, formats::e4m3fnuz, formats::e5m2fnuz,
          formats::e2m3, formats::e3m2, formats::e2m1,     formats::e8m0};
}

}  // namespace fmtcheck::testing
