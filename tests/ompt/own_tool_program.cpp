// An OpenMP program that is its own OMPT tool (defines ompt_start_tool): libomp calls
// the first ompt_start_tool the dynamic loader finds, the program's, so the agent's
// tool never starts (tests/ompt, check_ompt_run.py --case own_tool). Prints "own tool
// initialized" from its initialize and "ok" at the end.
#include <omp-tools.h>
#include <omp.h>

#include <cstdio>

namespace {

int g_initialized = 0;

int Initialize(ompt_function_lookup_t, int, ompt_data_t*) {
  g_initialized = 1;
  return 1;
}

void Finalize(ompt_data_t*) {}

ompt_start_tool_result_t g_result = {&Initialize, &Finalize, {0}};

__attribute__((noinline)) long work(int i) {
  long s = 0;
  for (int k = 0; k < 200000; ++k) s += (k ^ i) & 7;
  return s;
}

}  // namespace

extern "C" ompt_start_tool_result_t* ompt_start_tool(unsigned int, const char*) { return &g_result; }

int main() {
  long total = 0;
  for (int r = 0; r < 200; ++r) {
#pragma omp parallel reduction(+ : total)
    total += work(r + omp_get_thread_num());
  }
  if (g_initialized) std::printf("own tool initialized\n");
  std::printf("ok %ld\n", total);
  return 0;
}
