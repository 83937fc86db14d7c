#include "stats/nnls.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_multifit.h>

namespace commgauge::stats {

namespace {

struct MatrixDeleter {
  void operator()(gsl_matrix* m) const { gsl_matrix_free(m); }
};
struct VectorDeleter {
  void operator()(gsl_vector* v) const { gsl_vector_free(v); }
};
struct WorkDeleter {
  void operator()(gsl_multifit_linear_workspace* w) const { gsl_multifit_linear_free(w); }
};

// Unconstrained least squares over the columns in `passive`; returns their coefficients.
std::vector<double> solve_passive(std::span<const double> a, std::size_t rows, std::size_t cols,
                                  std::span<const double> b,
                                  const std::vector<std::size_t>& passive) {
  const std::size_t p = passive.size();
  // GSL's SVD least squares needs at least as many rows as columns: pad with zero rows.
  const std::size_t n = std::max(rows, p);
  std::unique_ptr<gsl_matrix, MatrixDeleter> x(gsl_matrix_calloc(n, p));
  std::unique_ptr<gsl_vector, VectorDeleter> y(gsl_vector_calloc(n));
  std::unique_ptr<gsl_vector, VectorDeleter> c(gsl_vector_alloc(p));
  std::unique_ptr<gsl_matrix, MatrixDeleter> cov(gsl_matrix_alloc(p, p));
  std::unique_ptr<gsl_multifit_linear_workspace, WorkDeleter> work(gsl_multifit_linear_alloc(n, p));
  for (std::size_t i = 0; i < rows; ++i) {
    gsl_vector_set(y.get(), i, b[i]);
    for (std::size_t j = 0; j < p; ++j)
      gsl_matrix_set(x.get(), i, j, a[i * cols + passive[j]]);
  }
  double chisq = 0;
  std::size_t rank = 0;
  // Singular values below 1e-12 of the largest are dropped: the minimum-norm solution.
  gsl_multifit_linear_tsvd(x.get(), y.get(), 1e-12, c.get(), cov.get(), &chisq, &rank, work.get());
  std::vector<double> out(p);
  for (std::size_t j = 0; j < p; ++j)
    out[j] = gsl_vector_get(c.get(), j);
  return out;
}

// w = A^T (b - A x)
std::vector<double> gradient(std::span<const double> a, std::size_t rows, std::size_t cols,
                             std::span<const double> b, const std::vector<double>& x) {
  std::vector<double> w(cols, 0.0);
  for (std::size_t i = 0; i < rows; ++i) {
    double r = b[i];
    for (std::size_t j = 0; j < cols; ++j)
      r -= a[i * cols + j] * x[j];
    for (std::size_t j = 0; j < cols; ++j)
      w[j] += a[i * cols + j] * r;
  }
  return w;
}

// Lawson and Hanson's iteration on (a, b) as given, from the passive set `guess` (may be empty).
NnlsResult lawson_hanson(std::span<const double> a, std::size_t rows, std::size_t cols,
                         std::span<const double> b, const std::vector<bool>& guess);

// A = QR (Householder, GSL): min ||A x - b|| and min ||R x - Q^T b|| (first cols rows) differ by
// a constant, so they share the solution and the gradient A^T (b - A x) = R^T (Q^T b - R x).
// Returns false where the reduction does not pay (rows <= cols) or GSL refuses.
bool reduce_by_qr(std::span<const double> a, std::size_t rows, std::size_t cols,
                  std::span<const double> b, std::vector<double>& r, std::vector<double>& qtb) {
  if (rows <= cols) return false;
  std::unique_ptr<gsl_matrix, MatrixDeleter> m(gsl_matrix_alloc(rows, cols));
  std::unique_ptr<gsl_vector, VectorDeleter> tau(gsl_vector_alloc(cols));
  std::unique_ptr<gsl_vector, VectorDeleter> y(gsl_vector_alloc(rows));
  for (std::size_t i = 0; i < rows; ++i) {
    gsl_vector_set(y.get(), i, b[i]);
    for (std::size_t j = 0; j < cols; ++j)
      gsl_matrix_set(m.get(), i, j, a[i * cols + j]);
  }
  if (gsl_linalg_QR_decomp(m.get(), tau.get()) != GSL_SUCCESS) return false;
  if (gsl_linalg_QR_QTvec(m.get(), tau.get(), y.get()) != GSL_SUCCESS) return false;
  r.assign(cols * cols, 0.0);
  qtb.resize(cols);
  for (std::size_t i = 0; i < cols; ++i) {
    qtb[i] = gsl_vector_get(y.get(), i);
    for (std::size_t j = i; j < cols; ++j)
      r[i * cols + j] = gsl_matrix_get(m.get(), i, j);
  }
  return true;
}

}  // namespace

NnlsResult nnls(std::span<const double> a, std::size_t rows, std::size_t cols,
                std::span<const double> b, const std::vector<bool>& passive_guess) {
  if (a.size() != rows * cols || b.size() != rows ||
      (!passive_guess.empty() && passive_guess.size() != cols)) {
    throw std::invalid_argument("nnls: the matrix and vector sizes do not match");
  }
  gsl_set_error_handler_off();
  // Tall problems (the calibration's: about 150 rows, at most 19 columns) are reduced to their
  // square R first; every inner least-squares solve then works on cols rows instead of rows.
  // benchmarks/calibration_benchmark.cpp, medians of 5 interleaved runs: the main fit 3174 ->
  // 982 ms, a bootstrap refit 25.3 -> 12.6 ms.
  std::vector<double> r, qtb;
  NnlsResult out = reduce_by_qr(a, rows, cols, b, r, qtb)
                       ? lawson_hanson(r, cols, cols, qtb, passive_guess)
                       : lawson_hanson(a, rows, cols, b, passive_guess);
  double r2 = 0;
  for (std::size_t i = 0; i < rows; ++i) {
    double res = b[i];
    for (std::size_t j = 0; j < cols; ++j)
      res -= a[i * cols + j] * out.x[j];
    r2 += res * res;
  }
  out.residual_norm = std::sqrt(r2);
  return out;
}

namespace {

NnlsResult lawson_hanson(std::span<const double> a, std::size_t rows, std::size_t cols,
                         std::span<const double> b, const std::vector<bool>& guess) {
  NnlsResult out;
  out.x.assign(cols, 0.0);
  std::vector<bool> in_passive(cols, false);
  // A warm start: the guessed passive set, less the columns its solution makes non-positive,
  // until the solution is positive on all of it. That is the outer loop's invariant (x feasible,
  // x_P the least-squares solution over P, x_P > 0), so the iteration below goes on from there
  // to the same optimum; from a good guess it adds no column and stops at its first test.
  // Model/calibration.cpp's Gauss-Newton steps start from the current point's positive set:
  // benchmarks/calibration_benchmark.cpp, CPU medians of 3 interleaved runs, the main fit
  // 1378 -> 465 ms, a bootstrap refit 13.8 -> 6.0 ms.
  std::vector<std::size_t> start;
  for (std::size_t j = 0; j < guess.size(); ++j) {
    if (guess[j]) start.push_back(j);
  }
  while (!start.empty()) {
    const auto z = solve_passive(a, rows, cols, b, start);
    std::vector<std::size_t> positive;
    for (std::size_t k = 0; k < start.size(); ++k) {
      if (z[k] > 0) positive.push_back(start[k]);
    }
    if (positive.size() == start.size()) {
      for (std::size_t k = 0; k < start.size(); ++k) {
        out.x[start[k]] = z[k];
        in_passive[start[k]] = true;
      }
      break;
    }
    start = std::move(positive);
  }
  double scale = 0;
  for (double v : a)
    scale = std::max(scale, std::abs(v));
  for (double v : b)
    scale = std::max(scale, std::abs(v));
  const double tol =
      1e-12 * std::max(scale, 1e-300) * std::max(scale, 1e-300) * static_cast<double>(rows + cols);
  const int max_iterations = static_cast<int>(3 * cols + 10);
  std::vector<double>& x = out.x;
  for (; out.iterations < max_iterations; ++out.iterations) {
    const auto w = gradient(a, rows, cols, b, x);
    std::size_t best = cols;
    double best_w = tol;
    for (std::size_t j = 0; j < cols; ++j) {
      if (!in_passive[j] && w[j] > best_w) {
        best_w = w[j];
        best = j;
      }
    }
    if (best == cols) {
      out.converged = true;
      break;
    }
    in_passive[best] = true;
    // Inner loop: keep the passive set's unconstrained solution feasible.
    for (int inner = 0; inner < max_iterations; ++inner) {
      std::vector<std::size_t> passive;
      for (std::size_t j = 0; j < cols; ++j) {
        if (in_passive[j]) passive.push_back(j);
      }
      const auto z = solve_passive(a, rows, cols, b, passive);
      bool feasible = true;
      for (double v : z)
        feasible = feasible && v > 0;
      if (feasible) {
        std::fill(x.begin(), x.end(), 0.0);
        for (std::size_t k = 0; k < passive.size(); ++k)
          x[passive[k]] = z[k];
        break;
      }
      double alpha = 1;
      for (std::size_t k = 0; k < passive.size(); ++k) {
        const std::size_t j = passive[k];
        if (z[k] <= 0) alpha = std::min(alpha, x[j] / (x[j] - z[k]));
      }
      for (std::size_t k = 0; k < passive.size(); ++k) {
        const std::size_t j = passive[k];
        x[j] += alpha * (z[k] - x[j]);
        if (x[j] <= 1e-15 * std::max(1.0, std::abs(z[k]))) {
          x[j] = 0;
          in_passive[j] = false;
        }
      }
    }
  }
  return out;
}

}  // namespace

}  // namespace commgauge::stats
