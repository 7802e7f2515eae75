// A program built with the project's (GNU) compiler and -fopenmp, so linked with
// GCC's libgomp.so.1: the OpenMP program `cilkprof run --openmp` is tested on. It
// prints which runtime it actually ran on (libomp defines __kmpc_fork_call, libgomp
// does not) and a task-parallel sum to check the run was right.
#include <dlfcn.h>
#include <omp.h>

#include <cstdio>

namespace {

long tree_sum(int depth) {
  if (depth == 0) return 1;
  long left = 0;
  long right = 0;
#pragma omp task shared(left)
  left = tree_sum(depth - 1);
#pragma omp task shared(right)
  right = tree_sum(depth - 1);
#pragma omp taskwait
  return left + right;
}

}  // namespace

int main() {
  long leaves = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
  leaves = tree_sum(12);
  std::printf("runtime: %s\nleaves: %ld\n", dlsym(RTLD_DEFAULT, "__kmpc_fork_call") ? "libomp" : "libgomp", leaves);
  return leaves == 4096 ? 0 : 1;
}
