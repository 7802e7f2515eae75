// An OpenMP program on GCC's libgomp (g++ -fopenmp), which has no OMPT: the agent
// profiles its threads physically (tests/ompt, check_ompt_run.py --case gomp).
#include <omp.h>

#include <cstdio>

namespace {

__attribute__((noinline)) long gomp_work(int i) {
  long s = 0;
  for (int k = 0; k < 3000000; ++k) s += (k ^ i) & 7;
  return s;
}

}  // namespace

int main() {
  long total = 0;
  for (int r = 0; r < 40; ++r) {
#pragma omp parallel reduction(+ : total)
    total += gomp_work(r + omp_get_thread_num());
  }
  std::printf("ok %ld\n", total);
  return 0;
}
