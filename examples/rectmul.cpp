// rectmul: C = A B for rectangular matrices (A is m x k, B is k x n) by the
// Cilk-5 rectmul strategy: always halve the largest of the three dimensions.
// Halving m or n gives two independent products that are spawned; halving k
// gives two products that accumulate into the same C, which run one after the
// other. The recursion is cache-oblivious and its base case is a 64-cube block.
#include <cilk/cilk.hpp>

#include <string>

#include "common/block_kernel.hpp"
#include "common/dense_matrix.hpp"
#include "common/example_support.hpp"

namespace ex = cilk_examples;

namespace {

const ex::Program kProgram{
    "rectmul",
    "Multiplies a random m x k matrix by a random k x n matrix, recursively halving the\n"
    "largest dimension (spawning both halves for m and n, running them in order for k;\n"
    "64 x 64 x 64 serial base case). Verified with Freivalds' randomized check and\n"
    "sampled entries.",
    {{"m", "rows of A and C", 3072, 1, 16384},
     {"k", "columns of A, rows of B", 768, 1, 16384},
     {"n", "columns of B and C", 2048, 1, 16384}}};

// C (m x n) += A (m x k) B (k x n); all row-major with leading dimensions.
__attribute__((noinline)) void rectmul_add(const double* a, long lda, const double* b, long ldb,
                                           double* c, long ldc, long m, long k, long n) {
  if (m <= ex::kBlockSize && k <= ex::kBlockSize && n <= ex::kBlockSize) {
    ex::block_multiply_add(a, lda, b, ldb, c, ldc, m, k, n);
    return;
  }
  if (m >= k && m >= n) {
    const long m1 = m / 2;
    cilk::scope scope;
    scope.spawn([=] { rectmul_add(a, lda, b, ldb, c, ldc, m1, k, n); });
    rectmul_add(a + m1 * lda, lda, b, ldb, c + m1 * ldc, ldc, m - m1, k, n);
    scope.sync();
  } else if (n >= k) {
    const long n1 = n / 2;
    cilk::scope scope;
    scope.spawn([=] { rectmul_add(a, lda, b, ldb, c, ldc, m, k, n1); });
    rectmul_add(a, lda, b + n1, ldb, c + n1, ldc, m, k, n - n1);
    scope.sync();
  } else {
    // Both halves write all of C: serial, so no two tasks update the same entries.
    const long k1 = k / 2;
    rectmul_add(a, lda, b, ldb, c, ldc, m, k1, n);
    rectmul_add(a + k1, lda, b + k1 * ldb, ldb, c, ldc, m, k - k1, n);
  }
}

}  // namespace

int main(int argc, char** argv) {
  return ex::guarded_main(kProgram, [&] {
    const auto args = ex::parse_args(kProgram, argc, argv);
    const long m = static_cast<long>(args[0]);
    const long k = static_cast<long>(args[1]);
    const long n = static_cast<long>(args[2]);
    ex::print_header(kProgram, ex::format("m=%ld k=%ld n=%ld", m, k, n));

    const ex::Matrix a = ex::random_matrix(m, k, 21);
    const ex::Matrix b = ex::random_matrix(k, n, 22);
    ex::Matrix c(m, n);

    const double seconds = ex::time_it([&] {
      cilk::run([&] { rectmul_add(a.data.data(), k, b.data.data(), n, c.data.data(), n, m, k, n); });
    });

    double sum = 0.0;
    for (double v : c.data) sum += v;
    ex::print_result(ex::format("C = A B for (%ld x %ld)(%ld x %ld); sum of C = %.6f", m, k, k, n, sum));
    std::string why = ex::check_product(a, b, c);
    if (why.empty()) why = ex::check_sampled_entries(a, b, c);
    if (!why.empty()) ex::verification_failed(kProgram, why);
    ex::print_verified("Freivalds check with 2 random vectors and 64 sampled entries");
    ex::print_time(seconds);
  });
}
