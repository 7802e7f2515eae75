// Programs whose schedule reacts to being sampled (issue 11, rough edge 8), for
// sampling_bias_e2e_test.cc. Each mode prints what it measured itself, one fact a line.
//
//   after-interruption  One thread runs steady_step() in short steps and time-stamps them
//                       with CLOCK_MONOTONIC (vDSO, no system call). When a step took
//                       clearly longer than usual, something interrupted the thread (a
//                       sample, a tick, a preemption), and it then runs
//                       after_interruption() for 500 us. That is what a work-stealing
//                       program does when one of its threads stops for a while: the
//                       others take its work, and the code it runs next (the serial part
//                       of a oneTBB program after a parallel phase) begins right after
//                       the interruption. Prints "fn NAME LO HI" (runtime addresses of the
//                       two functions), "cpu_after N" and "cpu_total N" (ns of the
//                       thread's CPU time) and "after_calls N".
//   shared-cpu          Two threads spin on the same CPU for a second; prints
//                       "switches_per_cpu_s X" for each: how often the scheduler preempted
//                       them, per second of their CPU time.
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

uint64_t ClockNs(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

volatile uint64_t g_sink = 1;

inline uint64_t Mix(uint64_t x, int rounds) {
  for (int i = 0; i < rounds; ++i) x = x * 6364136223846793005ull + 1442695040888963407ull;
  return x;
}

void PrintRange(const char* name, const void* function) {
  Dl_info info;
  void* entry = nullptr;
  if (dladdr1(function, &info, &entry, RTLD_DL_SYMENT) == 0) entry = nullptr;
  const auto* symbol = static_cast<const ElfW(Sym)*>(entry);
  if (symbol == nullptr || symbol->st_size == 0) {
    std::fprintf(stderr, "no symbol size for %s (link with -rdynamic)\n", name);
    return;
  }
  const auto lo = reinterpret_cast<uintptr_t>(function);
  std::printf("fn %s %" PRIuPTR " %" PRIuPTR "\n", name, lo, lo + symbol->st_size);
}

}  // namespace

// Exported (the program is linked with -rdynamic) so that dladdr1 finds their sizes.
extern "C" __attribute__((noinline)) void steady_step() { g_sink = Mix(g_sink, 200); }

extern "C" __attribute__((noinline)) void after_interruption(uint64_t wall_ns) {
  const uint64_t end = ClockNs(CLOCK_MONOTONIC) + wall_ns;
  uint64_t x = g_sink;
  do {
    x = Mix(x, 200);
  } while (ClockNs(CLOCK_MONOTONIC) < end);
  g_sink = x;
}

namespace {

int AfterInterruption() {
  constexpr uint64_t kCpuBudgetNs = 1500000000;  // of the thread's CPU time
  constexpr uint64_t kAfterWallNs = 500000;      // half the default period
  // What a step normally takes, from the median of a few thousand.
  std::vector<uint64_t> steps;
  uint64_t last = ClockNs(CLOCK_MONOTONIC);
  for (int i = 0; i < 4000; ++i) {
    steady_step();
    const uint64_t now = ClockNs(CLOCK_MONOTONIC);
    steps.push_back(now - last);
    last = now;
  }
  std::nth_element(steps.begin(), steps.begin() + steps.size() / 2, steps.end());
  // A sample costs microseconds (interrupt, signal, unwinding), far above the jitter of
  // a step of a few hundred nanoseconds.
  const uint64_t gap_ns = steps[steps.size() / 2] + 3000;

  const uint64_t start_cpu = ClockNs(CLOCK_THREAD_CPUTIME_ID);
  uint64_t after_cpu = 0, calls = 0, now_cpu = start_cpu;
  last = ClockNs(CLOCK_MONOTONIC);
  for (uint64_t step = 1; now_cpu - start_cpu < kCpuBudgetNs; ++step) {
    steady_step();
    uint64_t now = ClockNs(CLOCK_MONOTONIC);
    if (now - last > gap_ns) {
      const uint64_t before = ClockNs(CLOCK_THREAD_CPUTIME_ID);
      after_interruption(kAfterWallNs);
      after_cpu += ClockNs(CLOCK_THREAD_CPUTIME_ID) - before;
      ++calls;
      now = ClockNs(CLOCK_MONOTONIC);
    }
    last = now;
    if (step % 256 == 0) now_cpu = ClockNs(CLOCK_THREAD_CPUTIME_ID);
  }
  const uint64_t total = ClockNs(CLOCK_THREAD_CPUTIME_ID) - start_cpu;
  PrintRange("steady_step", reinterpret_cast<const void*>(&steady_step));
  PrintRange("after_interruption", reinterpret_cast<const void*>(&after_interruption));
  std::printf("cpu_after %" PRIu64 "\ncpu_total %" PRIu64 "\nafter_calls %" PRIu64 "\n", after_cpu,
              total, calls);
  return 0;
}

volatile int g_stop = 0;

void* Spin(void* out) {
  uint64_t x = 1;
  while (__atomic_load_n(&g_stop, __ATOMIC_RELAXED) == 0) x = Mix(x, 64);
  g_sink = x;
  rusage usage;
  getrusage(RUSAGE_THREAD, &usage);
  const double cpu_s = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                       1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
  *static_cast<double*>(out) = cpu_s > 0 ? static_cast<double>(usage.ru_nivcsw) / cpu_s : 0;
  return nullptr;
}

int SharedCpu() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return 1;
  int cpu = 0;
  while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &allowed)) ++cpu;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  if (sched_setaffinity(0, sizeof one, &one) != 0) return 1;  // inherited by the threads
  pthread_t threads[2];
  double rates[2] = {0, 0};
  for (int i = 0; i < 2; ++i) pthread_create(&threads[i], nullptr, Spin, &rates[i]);
  const timespec second{1, 0};
  nanosleep(&second, nullptr);
  __atomic_store_n(&g_stop, 1, __ATOMIC_RELAXED);
  for (pthread_t t : threads) pthread_join(t, nullptr);
  for (double rate : rates) std::printf("switches_per_cpu_s %.1f\n", rate);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "after-interruption") == 0) return AfterInterruption();
  if (argc == 2 && std::strcmp(argv[1], "shared-cpu") == 0) return SharedCpu();
  std::fprintf(stderr, "usage: %s after-interruption|shared-cpu\n", argv[0]);
  return 2;
}
