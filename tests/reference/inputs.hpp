// Source values (float or double) that exercise a format: its boundaries
// exhaustively, and reproducible random values spread over its range.
#pragma once

#include <cstdint>
#include <vector>

#include "reference_format.hpp"

namespace fmtcheck::reference {

// Every ladder value and every midpoint between neighbours (each tie), with
// the source type's neighbours on either side; every binade edge 2^k of the
// source type with its neighbours; the source's extremes; both signs.
// Sorted by bits, no duplicates.
template <typename T>
std::vector<T> boundary_inputs(const ReferenceFormat& f);

// +-0, +-inf, and quiet and signaling NaNs of both signs with payloads.
template <typename T>
std::vector<T> special_inputs();

// count values from a fixed seed: a quarter uniform bit patterns (every
// class), half log-uniform over the format's range and four binades past
// each end, a quarter within three source ulps of a ladder value or midpoint.
template <typename T>
std::vector<T> random_inputs(const ReferenceFormat& f, std::size_t count, std::uint64_t seed);

// Every stride-th element, so a huge boundary set can be sampled evenly.
template <typename T>
std::vector<T> every_nth(const std::vector<T>& all, std::size_t stride);

}  // namespace fmtcheck::reference
