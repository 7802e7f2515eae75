// matmul: C = A B for square n x n matrices by the Cilk-5 divide-and-conquer
// algorithm: split all three matrices into quadrants and compute the eight
// quadrant products in two phases of four parallel products each (the two
// products that update the same quadrant of C are in different phases, so no
// two parallel tasks write the same memory). Blocks of at most 64 x 64 are
// multiplied serially.
#include <cilk/cilk.hpp>

#include <string>

#include "common/block_kernel.hpp"
#include "common/dense_matrix.hpp"
#include "common/example_support.hpp"

namespace ex = cilk_examples;

namespace {

const ex::Program kProgram{
    "matmul",
    "Multiplies two random n x n matrices with the Cilk-5 recursive quadrant algorithm\n"
    "(two phases of four spawned quadrant products; 64 x 64 serial base case). Verified\n"
    "with Freivalds' randomized check (C x == A (B x)) and sampled entries.",
    {{"n", "matrix dimension", 2048, 1, 8192}}};

// C (m x n) += A (m x k) B (k x n); all row-major with leading dimensions.
__attribute__((noinline)) void matmul_add(const double* a, long lda, const double* b, long ldb,
                                          double* c, long ldc, long m, long k, long n) {
  if (m == 0 || k == 0 || n == 0) return;
  if (m <= ex::kBlockSize && k <= ex::kBlockSize && n <= ex::kBlockSize) {
    ex::block_multiply_add(a, lda, b, ldb, c, ldc, m, k, n);
    return;
  }
  const long m1 = m / 2, k1 = k / 2, n1 = n / 2;
  const long m2 = m - m1, k2 = k - k1, n2 = n - n1;
  const double* a00 = a;
  const double* a01 = a + k1;
  const double* a10 = a + m1 * lda;
  const double* a11 = a10 + k1;
  const double* b00 = b;
  const double* b01 = b + n1;
  const double* b10 = b + k1 * ldb;
  const double* b11 = b10 + n1;
  double* c00 = c;
  double* c01 = c + n1;
  double* c10 = c + m1 * ldc;
  double* c11 = c10 + n1;

  cilk::scope scope;
  scope.spawn([=] { matmul_add(a00, lda, b00, ldb, c00, ldc, m1, k1, n1); });
  scope.spawn([=] { matmul_add(a00, lda, b01, ldb, c01, ldc, m1, k1, n2); });
  scope.spawn([=] { matmul_add(a10, lda, b00, ldb, c10, ldc, m2, k1, n1); });
  matmul_add(a10, lda, b01, ldb, c11, ldc, m2, k1, n2);
  scope.sync();

  scope.spawn([=] { matmul_add(a01, lda, b10, ldb, c00, ldc, m1, k2, n1); });
  scope.spawn([=] { matmul_add(a01, lda, b11, ldb, c01, ldc, m1, k2, n2); });
  scope.spawn([=] { matmul_add(a11, lda, b10, ldb, c10, ldc, m2, k2, n1); });
  matmul_add(a11, lda, b11, ldb, c11, ldc, m2, k2, n2);
  scope.sync();
}

}  // namespace

int main(int argc, char** argv) {
  return ex::guarded_main(kProgram, [&] {
    const long n = static_cast<long>(ex::parse_args(kProgram, argc, argv)[0]);
    ex::print_header(kProgram, ex::format("n=%ld", n));

    const ex::Matrix a = ex::random_matrix(n, n, 11);
    const ex::Matrix b = ex::random_matrix(n, n, 12);
    ex::Matrix c(n, n);

    const double seconds = ex::time_it([&] {
      cilk::run([&] { matmul_add(a.data.data(), n, b.data.data(), n, c.data.data(), n, n, n, n); });
    });

    double trace = 0.0;
    for (long i = 0; i < n; ++i) trace += c.at(i, i);
    ex::print_result(ex::format("C = A B for %ld x %ld; trace(C) = %.6f", n, n, trace));
    std::string why = ex::check_product(a, b, c);
    if (why.empty()) why = ex::check_sampled_entries(a, b, c);
    if (!why.empty()) ex::verification_failed(kProgram, why);
    ex::print_verified("Freivalds check with 2 random vectors and 64 sampled entries");
    ex::print_time(seconds);
  });
}
