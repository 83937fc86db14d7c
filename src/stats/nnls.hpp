#pragma once
// Non-negative least squares: min ||A x - b|| subject to x >= 0, by the active-set method of
// Lawson and Hanson (Solving Least Squares Problems, 1974, ch. 23). Hand-written because no
// Debian library offers it (GSL has no bound-constrained linear least squares; Eigen 3.4's NNLS
// module is not in Debian's package); the unconstrained subproblems are GSL's truncated-SVD
// least squares, so rank-deficient columns (parameters the data cannot separate) are handled;
// a tall problem is first reduced to its square R factor (GSL's Householder QR), which has the
// same solution.

#include <cstddef>
#include <span>
#include <vector>

namespace commgauge::stats {

struct NnlsResult {
  std::vector<double> x;
  double residual_norm = 0;  ///< ||A x - b||
  int iterations = 0;
  bool converged = false;  ///< the optimality conditions hold (else the iteration cap stopped it)
};

/// `a` is rows x cols, row-major. Throws std::invalid_argument on mismatched sizes.
/// `passive_guess` (empty, or one flag per column): the columns expected positive at the optimum,
/// e.g. the previous solution's in a sequence of similar problems. The iteration starts from the
/// least-squares solution over them (less those it makes non-positive) instead of from x = 0;
/// the optimum is the same, reached in fewer steps where the guess is good.
NnlsResult nnls(std::span<const double> a, std::size_t rows, std::size_t cols,
                std::span<const double> b, const std::vector<bool>& passive_guess = {});

}  // namespace commgauge::stats
