// The serial base case shared by the blocked linear-algebra examples:
// C (m x n) += A (m x k) * B (k x n) on row-major blocks with leading dimensions.
// Recursive algorithms stop splitting once a block fits in cache and call this.
// It is deliberately plain, portable C++ (no intrinsics, no tuning for one CPU),
// so the examples measure the runtime, not a tuned BLAS.
#pragma once

namespace cilk_examples {

// Dimensions at or below which recursive matrix algorithms call the kernel.
constexpr long kBlockSize = 64;

// C += sign * A * B. sign is +1 (multiply-add) or -1 (Schur-complement update).
// Each row of C is produced in strips of kStrip columns whose partial sums stay
// in registers for the whole k loop, so C is loaded and stored once per strip
// instead of once per term. That keeps the kernel compute-bound and insensitive
// to how the matrices happen to be placed in memory (streaming read-modify-write
// of C rows against B rows suffers from 4K-aliasing stalls that vary from run
// to run with the allocation addresses).
inline __attribute__((noinline)) void block_multiply_add(const double* __restrict a, long lda,
                                                         const double* __restrict b, long ldb,
                                                         double* __restrict c, long ldc, long m,
                                                         long k, long n, double sign = 1.0) {
  constexpr long kStrip = 8;
  for (long i = 0; i < m; ++i) {
    double* __restrict ci = c + i * ldc;
    const double* ai = a + i * lda;
    long j = 0;
    for (; j + kStrip <= n; j += kStrip) {
      // Eight named accumulators: the compiler keeps them in (vector) registers,
      // which it does not reliably do for a small array.
      double s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;
      const double* bp = b + j;
      for (long p = 0; p < k; ++p, bp += ldb) {
        const double aip = ai[p];
        s0 += aip * bp[0];
        s1 += aip * bp[1];
        s2 += aip * bp[2];
        s3 += aip * bp[3];
        s4 += aip * bp[4];
        s5 += aip * bp[5];
        s6 += aip * bp[6];
        s7 += aip * bp[7];
      }
      ci[j + 0] += sign * s0;
      ci[j + 1] += sign * s1;
      ci[j + 2] += sign * s2;
      ci[j + 3] += sign * s3;
      ci[j + 4] += sign * s4;
      ci[j + 5] += sign * s5;
      ci[j + 6] += sign * s6;
      ci[j + 7] += sign * s7;
    }
    for (; j < n; ++j) {
      double acc = 0.0;
      for (long p = 0; p < k; ++p) acc += ai[p] * b[p * ldb + j];
      ci[j] += sign * acc;
    }
  }
}

}  // namespace cilk_examples
