// lu: LU decomposition without pivoting (A = L U, L unit lower triangular, U
// upper triangular, stored in place) by the Cilk-5 recursive block algorithm:
//   factor A00;  in parallel: A01 <- L00^-1 A01  and  A10 <- A10 U00^-1;
//   A11 <- A11 - A10 A01;  factor A11.
// The triangular solves and the Schur-complement update are themselves
// recursive and parallel: independent column (or row) halves are spawned.
// Blocks of at most 64 are handled serially. The input is made diagonally
// dominant, so factoring without pivoting is stable.
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
    "lu",
    "LU-decomposes a random diagonally dominant n x n matrix without pivoting by the Cilk-5\n"
    "recursive block algorithm (parallel triangular solves and Schur-complement updates,\n"
    "64 x 64 serial base case). Verified by checking L (U x) == A x for random vectors x.",
    {{"n", "matrix dimension", 2560, 1, 8192}}};

constexpr long kBlock = ex::kBlockSize;

// C (m x n) -= A (m x k) B (k x n): halve the largest dimension; m and n halves
// are independent and spawned, k halves update the same C and run in order.
__attribute__((noinline)) void schur_update(const double* a, long lda, const double* b, long ldb, double* c,
                                            long ldc, long m, long k, long n) {
  if (m == 0 || k == 0 || n == 0) return;
  if (m <= kBlock && k <= kBlock && n <= kBlock) {
    ex::block_multiply_add(a, lda, b, ldb, c, ldc, m, k, n, -1.0);
    return;
  }
  if (m >= k && m >= n) {
    const long m1 = m / 2;
    cilk::scope scope;
    scope.spawn([=] { schur_update(a, lda, b, ldb, c, ldc, m1, k, n); });
    schur_update(a + m1 * lda, lda, b, ldb, c + m1 * ldc, ldc, m - m1, k, n);
    scope.sync();
  } else if (n >= k) {
    const long n1 = n / 2;
    cilk::scope scope;
    scope.spawn([=] { schur_update(a, lda, b, ldb, c, ldc, m, k, n1); });
    schur_update(a, lda, b + n1, ldb, c + n1, ldc, m, k, n - n1);
    scope.sync();
  } else {
    const long k1 = k / 2;
    schur_update(a, lda, b, ldb, c, ldc, m, k1, n);
    schur_update(a + k1, lda, b + k1 * ldb, ldb, c, ldc, m, k - k1, n);
  }
}

// B (k x m) <- L^-1 B, L the unit lower triangle of a k x k block (forward substitution).
__attribute__((noinline)) void lower_solve(const double* l, long ldl, double* b, long ldb, long k, long m) {
  if (k <= kBlock && m <= kBlock) {
    for (long i = 1; i < k; ++i) {
      double* bi = b + i * ldb;
      for (long p = 0; p < i; ++p) {
        const double lip = l[i * ldl + p];
        const double* bp = b + p * ldb;
        for (long j = 0; j < m; ++j) bi[j] -= lip * bp[j];
      }
    }
    return;
  }
  if (m > kBlock && m >= k) {  // columns of B are independent problems
    const long m1 = m / 2;
    cilk::scope scope;
    scope.spawn([=] { lower_solve(l, ldl, b, ldb, k, m1); });
    lower_solve(l, ldl, b + m1, ldb, k, m - m1);
    scope.sync();
    return;
  }
  const long k1 = k / 2;
  lower_solve(l, ldl, b, ldb, k1, m);
  schur_update(l + k1 * ldl, ldl, b, ldb, b + k1 * ldb, ldb, k - k1, k1, m);
  lower_solve(l + k1 * ldl + k1, ldl, b + k1 * ldb, ldb, k - k1, m);
}

// B (m x k) <- B U^-1, U the upper triangle (with diagonal) of a k x k block.
__attribute__((noinline)) void upper_solve(const double* u, long ldu, double* b, long ldb, long k, long m) {
  if (k <= kBlock && m <= kBlock) {
    for (long r = 0; r < m; ++r) {
      double* br = b + r * ldb;
      for (long j = 0; j < k; ++j) {
        const double x = br[j] / u[j * ldu + j];
        br[j] = x;
        const double* uj = u + j * ldu;
        for (long q = j + 1; q < k; ++q) br[q] -= x * uj[q];
      }
    }
    return;
  }
  if (m > kBlock && m >= k) {  // rows of B are independent problems
    const long m1 = m / 2;
    cilk::scope scope;
    scope.spawn([=] { upper_solve(u, ldu, b, ldb, k, m1); });
    upper_solve(u, ldu, b + m1 * ldb, ldb, k, m - m1);
    scope.sync();
    return;
  }
  const long k1 = k / 2;
  upper_solve(u, ldu, b, ldb, k1, m);
  schur_update(b, ldb, u + k1, ldu, b + k1, ldb, m, k1, k - k1);
  upper_solve(u + k1 * ldu + k1, ldu, b + k1, ldb, k - k1, m);
}

__attribute__((noinline)) void lu_serial(double* a, long lda, long n) {
  for (long p = 0; p < n; ++p) {
    const double pivot = a[p * lda + p];
    if (pivot == 0.0 || !std::isfinite(pivot)) {
      throw std::runtime_error(ex::format("pivot %ld is %g: the matrix needs pivoting, which lu does not do", p, pivot));
    }
    const double* ap = a + p * lda;
    for (long i = p + 1; i < n; ++i) {
      double* ai = a + i * lda;
      const double factor = ai[p] / pivot;
      ai[p] = factor;
      for (long j = p + 1; j < n; ++j) ai[j] -= factor * ap[j];
    }
  }
}

__attribute__((noinline)) void lu(double* a, long lda, long n) {
  if (n <= kBlock) {
    lu_serial(a, lda, n);
    return;
  }
  const long n0 = n / 2;
  const long n1 = n - n0;
  double* a00 = a;
  double* a01 = a + n0;
  double* a10 = a + n0 * lda;
  double* a11 = a10 + n0;
  lu(a00, lda, n0);
  {
    cilk::scope scope;
    scope.spawn([=] { lower_solve(a00, lda, a01, lda, n0, n1); });
    upper_solve(a00, lda, a10, lda, n0, n1);
    scope.sync();
  }
  schur_update(a10, lda, a01, lda, a11, lda, n1, n0, n1);
  lu(a11, lda, n1);
}

// Checks L (U x) == A x for two random vectors; lu_matrix holds L and U packed.
std::string check_factorization(const ex::Matrix& original, const ex::Matrix& lu_matrix) {
  const long n = original.rows;
  for (int t = 0; t < 2; ++t) {
    const std::vector<double> x = ex::random_vector(n, 0xC0FFEEu + t);
    std::vector<double> ux(n, 0.0), abs_ux(n, 0.0), lux(n, 0.0), scale(n, 0.0);
    for (long i = 0; i < n; ++i) {
      for (long j = i; j < n; ++j) {
        ux[i] += lu_matrix.at(i, j) * x[j];
        abs_ux[i] += std::fabs(lu_matrix.at(i, j) * x[j]);
      }
    }
    for (long i = 0; i < n; ++i) {
      lux[i] = ux[i];
      scale[i] = abs_ux[i];
      for (long j = 0; j < i; ++j) {
        lux[i] += lu_matrix.at(i, j) * ux[j];
        scale[i] += std::fabs(lu_matrix.at(i, j)) * abs_ux[j];
      }
    }
    std::string why = ex::compare_vectors(lux, ex::mat_vec(original, x), scale, ex::rounding_tolerance(2 * n));
    if (!why.empty()) return "L U x != A x: " + why;
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  return ex::guarded_main(kProgram, [&] {
    const long n = static_cast<long>(ex::parse_args(kProgram, argc, argv)[0]);
    ex::print_header(kProgram, ex::format("n=%ld", n));

    ex::Matrix a = ex::random_matrix(n, n, 51);
    for (long i = 0; i < n; ++i) a.at(i, i) += static_cast<double>(n);  // diagonally dominant
    ex::Matrix factors = a;

    const double seconds = ex::time_it([&] { cilk::run([&] { lu(factors.data.data(), n, n); }); });

    double log_det = 0.0;
    for (long i = 0; i < n; ++i) log_det += std::log(std::fabs(factors.at(i, i)));
    ex::print_result(ex::format("A = L U for %ld x %ld; log|det A| = %.9f", n, n, log_det));
    const std::string why = check_factorization(a, factors);
    if (!why.empty()) ex::verification_failed(kProgram, why);
    ex::print_verified("L (U x) == A x for 2 random vectors");
    ex::print_time(seconds);
  });
}
