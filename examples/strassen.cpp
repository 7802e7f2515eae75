// strassen: C = A B for square matrices by Strassen's algorithm: each level
// forms seven half-size products from sums of quadrants, computes the seven
// products in parallel (spawned, each building its own operand sums), and
// combines them into the quadrants of C with a parallel_for over rows. At and
// below 64 x 64 the classical kernel is faster and is used instead. Sizes that do
// not halve down to the base case are zero-padded.
#include <cilk/cilk.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "common/block_kernel.hpp"
#include "common/dense_matrix.hpp"
#include "common/example_support.hpp"

namespace ex = cilk_examples;

namespace {

const ex::Program kProgram{
    "strassen",
    "Multiplies two random n x n matrices with Strassen's algorithm: seven spawned\n"
    "half-size products per level, combined by a parallel_for; classical kernel at\n"
    "64 x 64 and below; zero-padding for other sizes. Verified with Freivalds'\n"
    "randomized check and sampled entries (tolerance scaled for Strassen's error growth).",
    {{"n", "matrix dimension", 2048, 1, 8192}}};

constexpr long kCutoff = 64;

// out (h x h, leading dimension h) = x + sign * y, where x, y have leading dimensions.
void add_blocks(const double* x, long ldx, const double* y, long ldy, double sign, double* out, long h) {
  for (long i = 0; i < h; ++i) {
    for (long j = 0; j < h; ++j) out[i * h + j] = x[i * ldx + j] + sign * y[i * ldy + j];
  }
}

// C = A B, all n x n with leading dimensions; n is even at every level above kCutoff.
__attribute__((noinline)) void strassen(const double* a, long lda, const double* b, long ldb, double* c,
                                        long ldc, long n);

// Operand of one of the seven products: either a quadrant as is, or a sum or
// difference of two quadrants (materialized into a temporary).
struct Operand {
  const double* x;
  long ldx;
  const double* y;  // null when the operand is x alone
  long ldy;
  double sign;
};

// M = op(a) * op(b), with M contiguous h x h. Runs inside a spawned task and owns
// its temporaries, so the seven products share nothing but read-only inputs.
__attribute__((noinline)) void strassen_product(Operand a, Operand b, double* m, long h) {
  std::vector<double> ta;
  std::vector<double> tb;
  const double* pa = a.x;
  long lda = a.ldx;
  const double* pb = b.x;
  long ldb = b.ldx;
  if (a.y != nullptr) {
    ta.resize(static_cast<std::size_t>(h * h));
    add_blocks(a.x, a.ldx, a.y, a.ldy, a.sign, ta.data(), h);
    pa = ta.data();
    lda = h;
  }
  if (b.y != nullptr) {
    tb.resize(static_cast<std::size_t>(h * h));
    add_blocks(b.x, b.ldx, b.y, b.ldy, b.sign, tb.data(), h);
    pb = tb.data();
    ldb = h;
  }
  strassen(pa, lda, pb, ldb, m, h, h);
}

void strassen(const double* a, long lda, const double* b, long ldb, double* c, long ldc, long n) {
  if (n <= kCutoff) {
    for (long i = 0; i < n; ++i) {
      for (long j = 0; j < n; ++j) c[i * ldc + j] = 0.0;
    }
    ex::block_multiply_add(a, lda, b, ldb, c, ldc, n, n, n);
    return;
  }
  const long h = n / 2;
  const double* a11 = a;
  const double* a12 = a + h;
  const double* a21 = a + h * lda;
  const double* a22 = a21 + h;
  const double* b11 = b;
  const double* b12 = b + h;
  const double* b21 = b + h * ldb;
  const double* b22 = b21 + h;

  std::vector<double> products(static_cast<std::size_t>(7 * h * h));
  double* m[7];
  for (int i = 0; i < 7; ++i) m[i] = products.data() + i * h * h;

  {
    cilk::scope scope;
    scope.spawn([&] { strassen_product({a11, lda, a22, lda, 1}, {b11, ldb, b22, ldb, 1}, m[0], h); });
    scope.spawn([&] { strassen_product({a21, lda, a22, lda, 1}, {b11, ldb, nullptr, 0, 0}, m[1], h); });
    scope.spawn([&] { strassen_product({a11, lda, nullptr, 0, 0}, {b12, ldb, b22, ldb, -1}, m[2], h); });
    scope.spawn([&] { strassen_product({a22, lda, nullptr, 0, 0}, {b21, ldb, b11, ldb, -1}, m[3], h); });
    scope.spawn([&] { strassen_product({a11, lda, a12, lda, 1}, {b22, ldb, nullptr, 0, 0}, m[4], h); });
    scope.spawn([&] { strassen_product({a21, lda, a11, lda, -1}, {b11, ldb, b12, ldb, 1}, m[5], h); });
    strassen_product({a12, lda, a22, lda, -1}, {b21, ldb, b22, ldb, 1}, m[6], h);
    scope.sync();
  }

  // C11 = M1 + M4 - M5 + M7, C12 = M3 + M5, C21 = M2 + M4, C22 = M1 - M2 + M3 + M6.
  cilk::parallel_for(0L, h, [&](long i) {
    double* c1 = c + i * ldc;
    double* c2 = c + (i + h) * ldc;
    const long r = i * h;
    for (long j = 0; j < h; ++j) {
      const double p1 = m[0][r + j], p2 = m[1][r + j], p3 = m[2][r + j], p4 = m[3][r + j];
      const double p5 = m[4][r + j], p6 = m[5][r + j], p7 = m[6][r + j];
      c1[j] = p1 + p4 - p5 + p7;
      c1[j + h] = p3 + p5;
      c2[j] = p2 + p4;
      c2[j + h] = p1 - p2 + p3 + p6;
    }
  });
}

// Smallest size >= n that halves evenly down to at most kCutoff; levels receives
// the number of Strassen levels that size gets.
long padded_size(long n, int* levels) {
  *levels = 0;
  long base = n;
  while (base > kCutoff) {
    base = (base + 1) / 2;
    ++*levels;
  }
  return base << *levels;
}

}  // namespace

int main(int argc, char** argv) {
  return ex::guarded_main(kProgram, [&] {
    const long n = static_cast<long>(ex::parse_args(kProgram, argc, argv)[0]);
    int levels = 0;
    const long p = padded_size(n, &levels);
    ex::print_header(kProgram, ex::format("n=%ld (padded to %ld, %d Strassen levels)", n, p, levels));

    const ex::Matrix a = ex::random_matrix(n, n, 31);
    const ex::Matrix b = ex::random_matrix(n, n, 32);
    ex::Matrix c(n, n);
    ex::Matrix pa(p, p), pb(p, p), pc(p, p);
    for (long i = 0; i < n; ++i) {
      for (long j = 0; j < n; ++j) {
        pa.at(i, j) = a.at(i, j);
        pb.at(i, j) = b.at(i, j);
      }
    }

    const double seconds = ex::time_it([&] {
      cilk::run([&] { strassen(pa.data.data(), p, pb.data.data(), p, pc.data.data(), p, p); });
    });

    for (long i = 0; i < n; ++i) {
      for (long j = 0; j < n; ++j) c.at(i, j) = pc.at(i, j);
    }
    double trace = 0.0;
    for (long i = 0; i < n; ++i) trace += c.at(i, i);
    ex::print_result(ex::format("C = A B for %ld x %ld; trace(C) = %.6f", n, n, trace));
    // Strassen's error bound grows by roughly a constant factor per level.
    const double growth = std::pow(12.0, levels);
    std::string why = ex::check_product(a, b, c, growth);
    if (why.empty()) why = ex::check_sampled_entries(a, b, c, growth);
    if (!why.empty()) ex::verification_failed(kProgram, why);
    ex::print_verified(ex::format("Freivalds check with 2 random vectors and 64 sampled entries, error growth %.0fx", growth));
    ex::print_time(seconds);
  });
}
