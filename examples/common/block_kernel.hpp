// The serial base case shared by the blocked linear-algebra examples:
// C (m x n) += A (m x k) * B (k x n) on row-major blocks with leading dimensions.
// Recursive algorithms stop splitting once a block fits in cache and call this.
// It is deliberately plain C++ (i-k-j order, contiguous inner loop the compiler
// can vectorize), so the examples measure the runtime, not a tuned BLAS.
#pragma once

namespace cilk_examples {

// Dimensions at or below which recursive matrix algorithms call the kernel.
constexpr long kBlockSize = 64;

// C += sign * A * B. sign is +1 (multiply-add) or -1 (Schur-complement update).
inline __attribute__((noinline)) void block_multiply_add(const double* __restrict a, long lda,
                                                         const double* __restrict b, long ldb,
                                                         double* __restrict c, long ldc, long m,
                                                         long k, long n, double sign = 1.0) {
  for (long i = 0; i < m; ++i) {
    double* __restrict ci = c + i * ldc;
    const double* ai = a + i * lda;
    for (long p = 0; p < k; ++p) {
      const double aip = sign * ai[p];
      const double* __restrict bp = b + p * ldb;
      for (long j = 0; j < n; ++j) ci[j] += aip * bp[j];
    }
  }
}

}  // namespace cilk_examples
