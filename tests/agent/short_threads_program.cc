// Many threads shorter than the sampling period (issue 12, row 8), run by
// agent_short_threads_e2e_test under the preloaded agent. Usage:
//   agent_short_threads_program [THREADS [US]]   (default 2000 threads of 75 us)
// One after the other, each thread burns US microseconds of its own CPU time in
// ShortWork and adds the CPU time its start routine took to a total (the agent samples a
// thread from the end of its registration, a few tens of microseconds after the thread
// started, to its unregistration after the routine). Prints "threads N cpu_ns TOTAL".
#include <pthread.h>
#include <time.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {

std::atomic<uint64_t> g_cpu_ns{0};
uint64_t g_burn_ns = 75000;
volatile double g_sink;

uint64_t ThreadCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

__attribute__((noinline)) void ShortWork() {
  const uint64_t until = ThreadCpuNs() + g_burn_ns;
  double x = 0;
  while (ThreadCpuNs() < until) {
    for (int i = 0; i < 200; ++i) x += i * 0.5;
  }
  g_sink = x;
}

void* Worker(void*) {
  const uint64_t start = ThreadCpuNs();
  ShortWork();
  g_cpu_ns.fetch_add(ThreadCpuNs() - start, std::memory_order_relaxed);
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2000;
  if (argc > 2) g_burn_ns = std::strtoull(argv[2], nullptr, 10) * 1000;
  for (int i = 0; i < threads; ++i) {
    pthread_t t;
    if (pthread_create(&t, nullptr, Worker, nullptr) != 0) return 90;
    pthread_join(t, nullptr);
  }
  std::printf("threads %d cpu_ns %llu\n", threads, static_cast<unsigned long long>(g_cpu_ns.load()));
  return 0;
}
