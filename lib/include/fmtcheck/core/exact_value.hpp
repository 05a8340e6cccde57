// An exact rational value, for input text and for error measurement: what a
// number typed by a user really is, before any rounding.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fmtcheck/core/format.hpp"
#include "fmtcheck/core/unpacked.hpp"

namespace fmtcheck {

class ExactValue {
 public:
  // finite values are exact; beyond_* stand for magnitudes far outside every
  // supported format (|x| > 1e400 or 0 < |x| < 1e-400), kept only as a sign.
  enum class Kind { finite, inf, nan, beyond_huge, beyond_tiny };

  // [+-]digits[.digits][e[+-]digits], hex floats such as 0x1.8p-3, inf,
  // infinity, nan (any case), and a fraction of two finite numbers such as
  // 1/3 or -0.1/3e5, exactly. nullopt and *error on malformed text.
  static std::optional<ExactValue> parse(std::string_view text, std::string* error = nullptr);
  // The exact value of finite or special Unpacked (its sticky bit must be clear).
  static ExactValue from_unpacked(const Unpacked& x);
  static ExactValue from_bits(const Format& f, std::uint64_t bits);

  ExactValue(const ExactValue&);
  ExactValue& operator=(const ExactValue&);
  ExactValue(ExactValue&&) noexcept;
  ExactValue& operator=(ExactValue&&) noexcept;
  ~ExactValue();

  [[nodiscard]] Kind kind() const;
  [[nodiscard]] bool sign() const;
  [[nodiscard]] bool is_zero() const;
  // 64 significant bits plus sticky: enough to round correctly to any format.
  [[nodiscard]] Unpacked to_unpacked() const;
  // Nearest double (ties to even).
  [[nodiscard]] double to_double() const;

  // Finite values only: |a - b|, |a - b| / |b| (nullopt when b is 0).
  static ExactValue abs_difference(const ExactValue& a, const ExactValue& b);
  static std::optional<ExactValue> relative_difference(const ExactValue& a, const ExactValue& b);
  // a / b for finite b != 0.
  static ExactValue quotient(const ExactValue& a, const ExactValue& b);
  // a - b, with its sign; finite values only.
  static ExactValue difference(const ExactValue& a, const ExactValue& b);
  // (sum of values[i] * weights[i]) / (sum of weights): finite values,
  // weights not all zero (the mean of a distribution over the values).
  static ExactValue weighted_mean(const std::vector<ExactValue>& values, const std::vector<std::uint64_t>& weights);

 private:
  struct Impl;
  explicit ExactValue(std::unique_ptr<Impl> impl);
  static std::optional<ExactValue> parse_fraction(std::string_view p, std::string_view q, std::string* error);
  std::unique_ptr<Impl> impl_;
};

}  // namespace fmtcheck
