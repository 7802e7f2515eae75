#include "matmul_kernel.hpp"

void MatmulKernel(const double* a, const double* b, double* c, int n, int ld) {
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n; ++k) {
      const double aik = a[i * ld + k];
      for (int j = 0; j < n; ++j) c[i * ld + j] += aik * b[k * ld + j];
    }
}
