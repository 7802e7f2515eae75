// The program of the no-sampling test (no_sampling_e2e_test.cc): it runs on the Cilk
// runtime (or not at all) and then reports what the profiler armed in it, read from
// the kernel, so that "no profiling signal" is checked where signals come from:
//
//   sigprof_caught  1 if SIGPROF has a handler in the kernel (SigCgt of
//                   /proc/self/status; the agent's sigaction interposition would hide
//                   it from sigaction()), else 0
//   perf_events     the process's perf_event descriptors (/proc/self/fd)
//   timers          the process's POSIX timers (/proc/self/timers)
//
// Before the report it takes one cilkprof_probe() sample on the main thread (not in
// `plain`).
//
//   no_sampling_program fib N    fib(N) on the runtime, then the report
//   no_sampling_program fork N   the same, then a child that _exits at once (its own
//                                profile), waited for
//   no_sampling_program plain    no runtime at all: some arithmetic, then the report
#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cilk/cilk.hpp>
#include <cilkprof/cilkprof.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace {

__attribute__((noinline)) std::int64_t fib(int n) {
  if (n < 2) return n;
  std::int64_t x = 0;
  std::int64_t y = 0;
  cilk::scope scope;
  scope.spawn([&] { x = fib(n - 1); });
  y = fib(n - 2);
  scope.sync();
  return x + y;
}

int SigprofCaught() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("SigCgt:", 0) != 0) continue;
    const unsigned long long mask = std::strtoull(line.c_str() + std::strlen("SigCgt:"), nullptr, 16);
    return static_cast<int>((mask >> (SIGPROF - 1)) & 1u);
  }
  return -1;
}

int PerfEvents() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  int count = 0;
  while (const dirent* entry = readdir(dir)) {
    char target[256] = {};
    const std::string link = std::string("/proc/self/fd/") + entry->d_name;
    if (readlink(link.c_str(), target, sizeof target - 1) > 0 && std::strstr(target, "perf_event") != nullptr) {
      ++count;
    }
  }
  closedir(dir);
  return count;
}

int Timers() {
  std::ifstream timers("/proc/self/timers");
  if (!timers) return -1;
  int count = 0;
  std::string line;
  while (std::getline(timers, line)) {
    if (line.rfind("ID:", 0) == 0) ++count;
  }
  return count;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  const int n = argc > 2 ? std::atoi(argv[2]) : 0;
  if (mode == "fib" || mode == "fork") {
    std::printf("fib(%d) = %lld\n", n, static_cast<long long>(cilk::run([&] { return fib(n); })));
  } else if (mode == "plain") {
    volatile std::uint64_t x = 1;
    for (int i = 0; i < 10000000; ++i) x = x * 6364136223846793005ull + 1;
  } else {
    std::fprintf(stderr, "usage: no_sampling_program fib N | fork N | plain\n");
    return 2;
  }
  // One synchronous sample (no signal involved), which a run without sampling keeps.
  // Not in `plain`: that process must record nothing at all.
  if (mode != "plain" && cilkprof_probe) cilkprof_probe();
  std::printf("sigprof_caught=%d perf_events=%d timers=%d\n", SigprofCaught(), PerfEvents(), Timers());
  std::fflush(stdout);
  if (mode == "fork") {
    const pid_t child = fork();
    // _exit, not exit: the runtime's exit handler joins its workers, which do not exist
    // in a fork child; under the agent the child's flusher thread reuses a worker's
    // cached thread descriptor and that join never returns. The agent's _exit still
    // makes its last flush and Goodbye.
    if (child == 0) _exit(0);
    int status = 0;
    if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "the child failed\n");
      return 1;
    }
  }
  return 0;
}
