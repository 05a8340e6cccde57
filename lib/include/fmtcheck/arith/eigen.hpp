// Opt-in Eigen support (not included by fmtcheck.hpp): NumTraits for the value
// types, so Eigen::Matrix<fmtcheck::bfloat16, Eigen::Dynamic, Eigen::Dynamic>
// works, products included (Eigen's own products sum in the element format,
// in an order Eigen chooses), and fmtcheck::matmul for a product with a
// chosen accumulation and a defined order.
#pragma once

#include <Eigen/Core>

#include "fmtcheck/arith/dot.hpp"
#include "fmtcheck/arith/types.hpp"

template <fmtcheck::Layout L, fmtcheck::Policy P>
struct Eigen::NumTraits<fmtcheck::basic_float<L, P>> : Eigen::GenericNumTraits<fmtcheck::basic_float<L, P>> {
  using T = fmtcheck::basic_float<L, P>;
  using Real = T;
  using NonInteger = T;
  using Literal = T;
  using Nested = T;
  enum {
    IsComplex = 0,
    IsInteger = 0,
    IsSigned = L.is_signed ? 1 : 0,
    RequireInitialization = 0,
    ReadCost = 1,
    AddCost = 3,
    MulCost = 3,
  };
  static T epsilon() { return std::numeric_limits<T>::epsilon(); }
  static T dummy_precision() { return T(std::ldexp(1.0, -(L.mantissa_bits / 2 + 1))); }
  static T highest() { return std::numeric_limits<T>::max(); }
  static T lowest() { return std::numeric_limits<T>::lowest(); }
  static T infinity() { return std::numeric_limits<T>::infinity(); }
  static T quiet_NaN() { return std::numeric_limits<T>::quiet_NaN(); }
  static int digits10() { return std::numeric_limits<T>::digits10; }
};

namespace fmtcheck {

// A * B with a chosen accumulation (or any DotKernel, e.g. a tensor-core
// model); every entry is one dot product in index order, rounded into Out.
// `flags`, when given, receives the per-entry flag counts.
template <class Out, class A, class B>
Eigen::Matrix<Out, Eigen::Dynamic, Eigen::Dynamic> matmul(const Eigen::MatrixBase<A>& a, const Eigen::MatrixBase<B>& b,
                                                          const DotKernel& kernel, FlagCounts* flags = nullptr) {
  using In = typename A::Scalar;
  static_assert(std::is_same_v<In, typename B::Scalar>, "matmul: both operands need the same element type");
  const auto m = static_cast<std::size_t>(a.rows()), k = static_cast<std::size_t>(a.cols());
  const auto n = static_cast<std::size_t>(b.cols());
  std::vector<std::uint64_t> a_bits, b_bits;
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t x = 0; x < k; ++x) a_bits.push_back(a(i, x).bits());
  for (std::size_t x = 0; x < k; ++x)
    for (std::size_t j = 0; j < n; ++j) b_bits.push_back(b(x, j).bits());
  const MatmulResult r = fmtcheck::matmul(In::format(), a_bits, b_bits, m, k, n, Out::format(), kernel, In::policy);
  if (flags != nullptr) *flags = r.flags;
  Eigen::Matrix<Out, Eigen::Dynamic, Eigen::Dynamic> c(static_cast<Eigen::Index>(m), static_cast<Eigen::Index>(n));
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j)
      c(i, j) = Out::from_bits(static_cast<typename Out::storage_type>(r.c[i * n + j]));
  return c;
}

template <class Out, class A, class B>
Eigen::Matrix<Out, Eigen::Dynamic, Eigen::Dynamic> matmul(const Eigen::MatrixBase<A>& a, const Eigen::MatrixBase<B>& b,
                                                          Accumulation acc, FlagCounts* flags = nullptr) {
  return matmul<Out>(a, b, dot_kernel(acc), flags);
}

}  // namespace fmtcheck
