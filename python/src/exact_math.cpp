// The float32 arithmetic `fmtcheck train` pins down (fmtcheck/train/
// exact_math.hpp, normalize.hpp, layers.hpp): the FMA-chain matmul, in-order
// column sums, softmax and layer norm over rows, and the correctly rounded
// softmax cross-entropy. fmtcheck.torch offers them in place of torch's own
// kernels, whose reduction order no one publishes, so that a torch model can
// be held to `fmtcheck train` bit for bit.
#include "bindings.hpp"
#include "float_arrays.hpp"
#include "fmtcheck/train/exact_math.hpp"
#include "fmtcheck/train/layers.hpp"
#include "fmtcheck/train/normalize.hpp"

namespace fmtcheck::python {
namespace {

FloatArray matmul_fma(const Array& a, const Array& b, std::size_t m, std::size_t n, std::size_t k) {
  const auto x = floats_of(a, "a"), y = floats_of(b, "b");
  if (x.size() != m * k || y.size() != n * k) throw std::invalid_argument("A must be M x K and B N x K");
  std::vector<float> d;
  {
    nb::gil_scoped_release unlocked;
    d = train::matmul_fma(x, y, m, n, k);
  }
  return to_numpy(std::move(d), {m, n});
}

// rows x cols from a flat array, refusing what does not divide.
std::size_t rows_of(std::span<const float> v, std::size_t cols, const char* what) {
  if (cols == 0 || v.size() % cols != 0) {
    throw std::invalid_argument(std::string(what) + " must be rows x " + std::to_string(cols));
  }
  return v.size() / cols;
}

FloatArray column_sums(const Array& x, std::size_t rows, std::size_t cols) {
  const auto v = floats_of(x, "x");
  if (v.size() != rows * cols) throw std::invalid_argument("x must be rows x cols");
  return to_numpy(train::column_sums(v, rows, cols), {cols});
}

FloatArray softmax_rows(const Array& x, std::size_t cols) {
  const auto v = floats_of(x, "x");
  const std::size_t rows = rows_of(v, cols, "x");
  return to_numpy(train::softmax_rows(v, cols), {rows, cols});
}

FloatArray softmax_rows_backward(const Array& p, const Array& dp, std::size_t cols) {
  const auto pv = floats_of(p, "p"), dv = floats_of(dp, "dp");
  const std::size_t rows = rows_of(pv, cols, "p");
  if (dv.size() != pv.size()) throw std::invalid_argument("dp must have p's shape");
  return to_numpy(train::softmax_rows_backward(pv, dv, cols), {rows, cols});
}

nb::tuple layer_norm(const Array& x, const Array& gamma, const Array& beta, float eps) {
  const auto v = floats_of(x, "x"), g = floats_of(gamma, "gamma"), b = floats_of(beta, "beta");
  const std::size_t rows = rows_of(v, g.size(), "x");
  if (b.size() != g.size()) throw std::invalid_argument("beta must have gamma's size");
  train::LayerNormResult r = train::layer_norm(v, g, b, eps);
  return nb::make_tuple(to_numpy(std::move(r.y), {rows, g.size()}), to_numpy(std::move(r.xhat), {rows, g.size()}),
                        to_numpy(std::move(r.rstd), {rows}));
}

nb::tuple layer_norm_backward(const Array& dy, const Array& gamma, const Array& xhat, const Array& rstd) {
  const auto d = floats_of(dy, "dy"), g = floats_of(gamma, "gamma"), xh = floats_of(xhat, "xhat"),
             rs = floats_of(rstd, "rstd");
  const std::size_t rows = rows_of(d, g.size(), "dy");
  if (xh.size() != d.size() || rs.size() != rows) throw std::invalid_argument("xhat and rstd must match dy");
  train::LayerNormGrads r = train::layer_norm_backward(d, g, xh, rs);
  return nb::make_tuple(to_numpy(std::move(r.dx), {rows, g.size()}), to_numpy(std::move(r.dgamma), {g.size()}),
                        to_numpy(std::move(r.dbeta), {g.size()}));
}

using Labels = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu, std::int32_t>;

nb::tuple softmax_cross_entropy(const Array& logits, const Labels& labels, std::size_t classes, float loss_scale) {
  const auto l = floats_of(logits, "logits");
  const std::span<const int> y(labels.data(), labels.size());
  if (l.size() != y.size() * classes) throw std::invalid_argument("logits must be rows x classes");
  for (const int c : y) {
    if (c < 0 || static_cast<std::size_t>(c) >= classes) throw std::invalid_argument("a label is out of range");
  }
  train::LossResult r = train::softmax_cross_entropy(l, y, classes, loss_scale);
  return nb::make_tuple(r.loss, to_numpy(std::move(r.grad), {y.size(), classes}));
}

}  // namespace

void bind_exact_math(nb::module_& m) {
  m.def("matmul_fma", &matmul_fma, default_fp, nb::arg("a"), nb::arg("b"), nb::arg("m"), nb::arg("n"), nb::arg("k"),
        "A.B^T (A m x k, B n x k) as fmtcheck train's float32 FMA chain, k in order.");
  m.def("column_sums", &column_sums, default_fp, nb::arg("x"), nb::arg("rows"), nb::arg("cols"),
        "Column sums in float32, rows in order.");
  m.def("softmax_rows", &softmax_rows, default_fp, nb::arg("x"), nb::arg("cols"),
        "Softmax of each row in float32, in order, exp correctly rounded (-inf entries give 0).");
  m.def("softmax_rows_backward", &softmax_rows_backward, default_fp, nb::arg("p"), nb::arg("dp"), nb::arg("cols"),
        "p (dp - sum(dp p)) per row, sums in order.");
  m.def("layer_norm", &layer_norm, default_fp, nb::arg("x"), nb::arg("gamma"), nb::arg("beta"), nb::arg("eps"),
        "Layer norm over rows of gamma's width: (y, xhat, rstd).");
  m.def("layer_norm_backward", &layer_norm_backward, default_fp, nb::arg("dy"), nb::arg("gamma"), nb::arg("xhat"),
        nb::arg("rstd"), "(dx, dgamma, dbeta), rows in order.");
  m.def("softmax_cross_entropy", &softmax_cross_entropy, default_fp, nb::arg("logits"), nb::arg("labels"), nb::arg("classes"),
        nb::arg("loss_scale"), "fmtcheck train's exact mean cross-entropy: (loss, gradient of loss x loss_scale).");
}

}  // namespace fmtcheck::python
