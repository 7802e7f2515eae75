// Coarsened recursive matrix multiply C += A*B (n x n, row-major, n a power of two),
// splitting C into quadrants down to 64x64 blocks, in three runtimes (see fib.cpp).
// The 64x64 leaves are MatmulKernel (matmul_kernel.cpp), one object for all three.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench_common.hpp"
#include "matmul_kernel.hpp"
#if defined(USE_CILK)
#include <cilk/cilk.hpp>
static const char* kName = "cilk";
#elif defined(USE_TBB)
#include <tbb/global_control.h>
#include <tbb/task_group.h>
static const char* kName = "tbb";
#elif defined(USE_OMP)
#include <omp.h>
static const char* kName = "omp";
#endif

constexpr int kBase = 64;

static void Mul(const double* a, const double* b, double* c, int n, int ld) {
  if (n <= kBase) return MatmulKernel(a, b, c, n, ld);
  const int h = n / 2;
  const double *a11 = a, *a12 = a + h, *a21 = a + h * ld, *a22 = a + h * ld + h;
  const double *b11 = b, *b12 = b + h, *b21 = b + h * ld, *b22 = b + h * ld + h;
  double *c11 = c, *c12 = c + h, *c21 = c + h * ld, *c22 = c + h * ld + h;
  for (int phase = 0; phase < 2; ++phase) {
    const double* x1 = phase == 0 ? a11 : a12;
    const double* x2 = phase == 0 ? a21 : a22;
    const double* y1 = phase == 0 ? b11 : b21;
    const double* y2 = phase == 0 ? b12 : b22;
#if defined(USE_CILK)
    cilk::scope s;
    s.spawn([&] { Mul(x1, y1, c11, h, ld); });
    s.spawn([&] { Mul(x1, y2, c12, h, ld); });
    s.spawn([&] { Mul(x2, y1, c21, h, ld); });
    Mul(x2, y2, c22, h, ld);
    s.sync();
#elif defined(USE_TBB)
    tbb::task_group g;
    g.run([&] { Mul(x1, y1, c11, h, ld); });
    g.run([&] { Mul(x1, y2, c12, h, ld); });
    g.run([&] { Mul(x2, y1, c21, h, ld); });
    Mul(x2, y2, c22, h, ld);
    g.wait();
#elif defined(USE_OMP)
#pragma omp task untied
    Mul(x1, y1, c11, h, ld);
#pragma omp task untied
    Mul(x1, y2, c12, h, ld);
#pragma omp task untied
    Mul(x2, y1, c21, h, ld);
    Mul(x2, y2, c22, h, ld);
#pragma omp taskwait
#else
    Mul(x1, y1, c11, h, ld);
    Mul(x1, y2, c12, h, ld);
    Mul(x2, y1, c21, h, ld);
    Mul(x2, y2, c22, h, ld);
#endif
  }
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 1024;
  std::vector<double> a(static_cast<size_t>(n) * n), b(a.size()), c(a.size(), 0.0);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<double>(i % 7) - 3;
    b[i] = static_cast<double>(i % 5) - 2;
  }
  double seconds = 0;
#if defined(USE_CILK)
  seconds = Seconds([&] { cilk::run([&] { Mul(a.data(), b.data(), c.data(), n, n); }); });
#elif defined(USE_TBB)
  const char* env = std::getenv("CILK_NWORKERS");
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, env ? std::atoi(env) : 2);
  seconds = Seconds([&] { Mul(a.data(), b.data(), c.data(), n, n); });
#elif defined(USE_OMP)
  seconds = Seconds([&] {
#pragma omp parallel
#pragma omp single
    Mul(a.data(), b.data(), c.data(), n, n);
  });
#else
  static const char* kName = "serial";
  seconds = Seconds([&] { Mul(a.data(), b.data(), c.data(), n, n); });
#endif
  double checksum = 0;
  for (double v : c) checksum += v;
  std::printf("%s matmul %d %.4f %.0f\n", kName, n, seconds, checksum);
  return 0;
}
