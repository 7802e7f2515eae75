// The program the end-to-end tests run under the preloaded agent. Usage:
//   agent_e2e_program threads [EXIT_CODE]   two threads burn ~300 ms of CPU each
//   agent_e2e_program fork [nofollow]       burn, fork; the child burns and exits
//   agent_e2e_program own-sigprof           installs its own SIGPROF handler (ITIMER_PROF)
//   agent_e2e_program sleep                 the main thread sleeps ~300 ms (wall clock)
//   agent_e2e_program exec                  burn, then exec itself as "after-exec"
// It prints facts the tests compare with the profile: "key value" lines on stdout.
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

volatile double g_sink;

uint64_t ThreadCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

__attribute__((noinline)) void BurnInner(uint64_t cpu_ns) {
  const uint64_t until = ThreadCpuNs() + cpu_ns;
  double x = 0;
  while (ThreadCpuNs() < until) {
    for (int i = 0; i < 20000; ++i) x += i * 0.5;
  }
  g_sink = x;
}

__attribute__((noinline)) void BurnOuter(uint64_t cpu_ns) {
  BurnInner(cpu_ns);
  g_sink = g_sink + 1;
}

constexpr uint64_t kMs = 1000000;

void* Worker(void*) {
  BurnOuter(300 * kMs);
  std::printf("thread 1 tid %ld cpu_ns %llu\n", syscall(SYS_gettid),
              static_cast<unsigned long long>(ThreadCpuNs()));
  return nullptr;
}

int Threads(int exit_code) {
  pthread_t worker;
  if (pthread_create(&worker, nullptr, Worker, nullptr) != 0) return 90;
  BurnOuter(300 * kMs);
  pthread_join(worker, nullptr);
  std::printf("thread 0 tid %ld cpu_ns %llu\n", syscall(SYS_gettid),
              static_cast<unsigned long long>(ThreadCpuNs()));
  return exit_code;
}

int Fork() {
  BurnOuter(300 * kMs);
  std::fflush(stdout);
  const pid_t child = fork();
  if (child < 0) return 91;
  if (child == 0) {
    const uint64_t start = ThreadCpuNs();
    BurnOuter(100 * kMs);
    std::printf("child pid %d cpu_ns %llu\n", getpid(),
                static_cast<unsigned long long>(ThreadCpuNs() - start));
    std::exit(0);  // atexit: the child's agent flushes
  }
  int status = 0;
  waitpid(child, &status, 0);
  std::printf("parent pid %d\n", getpid());
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 92;
}

std::atomic<int> g_own_signals{0};
void OwnHandler(int) { g_own_signals.fetch_add(1, std::memory_order_relaxed); }

int OwnSigprof() {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = OwnHandler;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGPROF, &sa, nullptr) != 0) return 93;
  struct sigaction check;
  if (sigaction(SIGPROF, nullptr, &check) != 0 || check.sa_handler != OwnHandler) return 94;
  itimerval tv{{0, 1000}, {0, 1000}};
  setitimer(ITIMER_PROF, &tv, nullptr);
  BurnOuter(300 * kMs);
  itimerval off{};
  setitimer(ITIMER_PROF, &off, nullptr);
  std::printf("own_signals %d\n", g_own_signals.load());
  return g_own_signals.load() > 0 ? 0 : 95;
}

int Sleep() {
  timespec until;
  clock_gettime(CLOCK_MONOTONIC, &until);
  until.tv_nsec += 300 * kMs;
  until.tv_sec += until.tv_nsec / 1000000000;
  until.tv_nsec %= 1000000000;
  // Sampling signals interrupt sleeps (EINTR): an absolute deadline makes that harmless.
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, nullptr) == EINTR) {
  }
  return 0;
}

int Exec(const char* self) {
  BurnOuter(200 * kMs);
  std::fflush(stdout);
  char* const argv[] = {const_cast<char*>(self), const_cast<char*>("after-exec"), nullptr};
  execv("/proc/self/exe", argv);
  return 96;
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "threads";
  if (std::strcmp(mode, "threads") == 0) return Threads(argc > 2 ? std::atoi(argv[2]) : 0);
  if (std::strcmp(mode, "fork") == 0) return Fork();
  if (std::strcmp(mode, "own-sigprof") == 0) return OwnSigprof();
  if (std::strcmp(mode, "sleep") == 0) return Sleep();
  if (std::strcmp(mode, "exec") == 0) return Exec(argv[0]);
  if (std::strcmp(mode, "after-exec") == 0) {
    BurnOuter(100 * kMs);
    return 0;
  }
  std::fprintf(stderr, "unknown mode %s\n", mode);
  return 2;
}
