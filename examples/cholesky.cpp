// cholesky: Cholesky factorization A = L L^T of a symmetric positive definite
// matrix (lower triangle, in place) by the recursive block algorithm:
//   factor A00;  A10 <- A10 L00^-T;  A11 <- A11 - A10 A10^T;  factor A11.
// The triangular solve splits independent row halves (spawned) or the triangle;
// the symmetric update splits into two symmetric updates and one general
// product, all three independent and run in parallel. Blocks of at most 64 are
// handled serially.
//
// The Cilk-5 benchmark of the same name factors a sparse matrix stored as a
// quadtree; this one is dense (the same recursive structure without the sparsity
// bookkeeping), which keeps its verification exact and its input reproducible.
#include <cilk/cilk.hpp>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/block_kernel.hpp"
#include "common/dense_matrix.hpp"
#include "common/example_support.hpp"

namespace ex = cilk_examples;

namespace {

const ex::Program kProgram{
    "cholesky",
    "Cholesky-factors a random symmetric positive definite n x n matrix (A = L L^T) by the\n"
    "recursive block algorithm: parallel triangular solve, parallel symmetric update\n"
    "(three independent sub-updates), 64 x 64 serial base case. Verified by checking\n"
    "L (L^T x) == A x for random vectors x.",
    {{"n", "matrix dimension", 4096, 1, 8192}}};

constexpr long kBlock = ex::kBlockSize;

// C (m x n) -= A (m x k) B^T, B being n x k. Serial base case transposes the
// block of B so the inner loop is the contiguous one of block_multiply_add.
__attribute__((noinline)) void update_transposed(const double* a, long lda, const double* b, long ldb,
                                                 double* c, long ldc, long m, long k, long n) {
  if (m == 0 || k == 0 || n == 0) return;
  if (m <= kBlock && k <= kBlock && n <= kBlock) {
    double bt[kBlock * kBlock];  // bt (k x n) = B^T
    for (long j = 0; j < n; ++j) {
      for (long p = 0; p < k; ++p) bt[p * n + j] = b[j * ldb + p];
    }
    ex::block_multiply_add(a, lda, bt, n, c, ldc, m, k, n, -1.0);
    return;
  }
  if (m >= k && m >= n) {
    const long m1 = m / 2;
    cilk::scope scope;
    scope.spawn([=] { update_transposed(a, lda, b, ldb, c, ldc, m1, k, n); });
    update_transposed(a + m1 * lda, lda, b, ldb, c + m1 * ldc, ldc, m - m1, k, n);
    scope.sync();
  } else if (n >= k) {
    const long n1 = n / 2;
    cilk::scope scope;
    scope.spawn([=] { update_transposed(a, lda, b, ldb, c, ldc, m, k, n1); });
    update_transposed(a, lda, b + n1 * ldb, ldb, c + n1, ldc, m, k, n - n1);
    scope.sync();
  } else {
    const long k1 = k / 2;
    update_transposed(a, lda, b, ldb, c, ldc, m, k1, n);
    update_transposed(a + k1, lda, b + k1, ldb, c, ldc, m, k - k1, n);
  }
}

// Lower triangle of C (n x n) -= A A^T, A being n x k. Entries above the
// diagonal are never touched.
__attribute__((noinline)) void symmetric_update(const double* a, long lda, double* c, long ldc, long n, long k) {
  if (n == 0 || k == 0) return;
  if (n <= kBlock && k > kBlock) {  // both halves of k update the same C: in order
    const long k1 = k / 2;
    symmetric_update(a, lda, c, ldc, n, k1);
    symmetric_update(a + k1, lda, c, ldc, n, k - k1);
    return;
  }
  if (n <= kBlock) {
    double at[kBlock * kBlock];  // at (k x n) = A^T, so the inner loop is contiguous
    for (long i = 0; i < n; ++i) {
      for (long p = 0; p < k; ++p) at[p * n + i] = a[i * lda + p];
    }
    for (long i = 0; i < n; ++i) {
      const double* ai = a + i * lda;
      double* ci = c + i * ldc;
      for (long p = 0; p < k; ++p) {
        const double aip = ai[p];
        const double* atp = at + p * n;
        for (long j = 0; j <= i; ++j) ci[j] -= aip * atp[j];
      }
    }
    return;
  }
  const long n0 = n / 2;
  const long n1 = n - n0;
  const double* a1 = a + n0 * lda;
  cilk::scope scope;
  scope.spawn([=] { symmetric_update(a, lda, c, ldc, n0, k); });
  scope.spawn([=] { symmetric_update(a1, lda, c + n0 * ldc + n0, ldc, n1, k); });
  update_transposed(a1, lda, a, lda, c + n0 * ldc, ldc, n1, k, n0);
  scope.sync();
}

// B (m x k) <- B L^-T, L the lower triangle (with diagonal) of a k x k block.
__attribute__((noinline)) void triangular_solve(const double* l, long ldl, double* b, long ldb, long k, long m) {
  if (k <= kBlock && m <= kBlock) {
    for (long r = 0; r < m; ++r) {
      double* br = b + r * ldb;
      for (long j = 0; j < k; ++j) {
        const double* lj = l + j * ldl;
        double s = br[j];
        for (long p = 0; p < j; ++p) s -= br[p] * lj[p];
        br[j] = s / lj[j];
      }
    }
    return;
  }
  if (m > kBlock && m >= k) {  // rows of B are independent problems
    const long m1 = m / 2;
    cilk::scope scope;
    scope.spawn([=] { triangular_solve(l, ldl, b, ldb, k, m1); });
    triangular_solve(l, ldl, b + m1 * ldb, ldb, k, m - m1);
    scope.sync();
    return;
  }
  const long k1 = k / 2;
  triangular_solve(l, ldl, b, ldb, k1, m);
  // B1 -= X0 L10^T, with L10 the (k - k1) x k1 block below L00.
  update_transposed(b, ldb, l + k1 * ldl, ldl, b + k1, ldb, m, k1, k - k1);
  triangular_solve(l + k1 * ldl + k1, ldl, b + k1, ldb, k - k1, m);
}

__attribute__((noinline)) void cholesky_serial(double* a, long lda, long n) {
  for (long j = 0; j < n; ++j) {
    double* aj = a + j * lda;
    double d = aj[j];
    for (long p = 0; p < j; ++p) d -= aj[p] * aj[p];
    if (!(d > 0.0)) {
      throw std::runtime_error(ex::format("pivot %ld is %g: the matrix is not positive definite", j, d));
    }
    const double ljj = std::sqrt(d);
    aj[j] = ljj;
    for (long i = j + 1; i < n; ++i) {
      double* ai = a + i * lda;
      double s = ai[j];
      for (long p = 0; p < j; ++p) s -= ai[p] * aj[p];
      ai[j] = s / ljj;
    }
  }
}

__attribute__((noinline)) void cholesky(double* a, long lda, long n) {
  if (n <= kBlock) {
    cholesky_serial(a, lda, n);
    return;
  }
  const long n0 = n / 2;
  const long n1 = n - n0;
  double* a10 = a + n0 * lda;
  double* a11 = a10 + n0;
  cholesky(a, lda, n0);
  triangular_solve(a, lda, a10, lda, n0, n1);
  symmetric_update(a10, lda, a11, lda, n1, n0);
  cholesky(a11, lda, n1);
}

// A random symmetric matrix made diagonally dominant with a positive diagonal,
// hence positive definite.
ex::Matrix spd_matrix(long n) {
  ex::Matrix a = ex::random_matrix(n, n, 61);
  for (long i = 0; i < n; ++i) {
    for (long j = 0; j < i; ++j) a.at(j, i) = a.at(i, j);
    a.at(i, i) = std::fabs(a.at(i, i)) + static_cast<double>(n);
  }
  return a;
}

// Checks L (L^T x) == A x for two random vectors; only the lower triangle of
// factors is L (the upper triangle still holds A's entries and is ignored).
std::string check_factorization(const ex::Matrix& original, const ex::Matrix& factors) {
  const long n = original.rows;
  for (int t = 0; t < 2; ++t) {
    const std::vector<double> x = ex::random_vector(n, 0xBEEFu + t);
    std::vector<double> ltx(n, 0.0), abs_ltx(n, 0.0), lltx(n, 0.0), scale(n, 0.0);
    for (long j = 0; j < n; ++j) {  // (L^T x)_i = sum_{j >= i} L(j, i) x_j
      for (long i = 0; i <= j; ++i) {
        ltx[i] += factors.at(j, i) * x[j];
        abs_ltx[i] += std::fabs(factors.at(j, i) * x[j]);
      }
    }
    for (long i = 0; i < n; ++i) {
      for (long j = 0; j <= i; ++j) {
        lltx[i] += factors.at(i, j) * ltx[j];
        scale[i] += std::fabs(factors.at(i, j)) * abs_ltx[j];
      }
    }
    std::string why = ex::compare_vectors(lltx, ex::mat_vec(original, x), scale, ex::rounding_tolerance(2 * n));
    if (!why.empty()) return "L L^T x != A x: " + why;
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  return ex::guarded_main(kProgram, [&] {
    const long n = static_cast<long>(ex::parse_args(kProgram, argc, argv)[0]);
    ex::print_header(kProgram, ex::format("n=%ld", n));

    const ex::Matrix a = spd_matrix(n);
    ex::Matrix factors = a;

    const double seconds = ex::time_it([&] { cilk::run([&] { cholesky(factors.data.data(), n, n); }); });

    double log_det = 0.0;
    for (long i = 0; i < n; ++i) log_det += 2.0 * std::log(factors.at(i, i));
    ex::print_result(ex::format("A = L L^T for %ld x %ld; log det A = %.9f", n, n, log_det));
    const std::string why = check_factorization(a, factors);
    if (!why.empty()) ex::verification_failed(kProgram, why);
    ex::print_verified("L (L^T x) == A x for 2 random vectors");
    ex::print_time(seconds);
  });
}
