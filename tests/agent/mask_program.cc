// The program the signal-mask end-to-end tests run under the preloaded agent (issue
// 11). Usage:
//   agent_mask_program blocked-workers  two workers created under a full mask (as xz
//                                       does); one sets a full mask with
//                                       pthread_sigmask(SIG_SETMASK), the other blocks
//                                       everything with sigprocmask(SIG_BLOCK); each
//                                       burns ~300 ms of CPU
//   agent_mask_program raw-blocked      a worker blocks every signal with a direct
//                                       rt_sigprocmask system call, burns ~300 ms
//   agent_mask_program bad-frames       a worker with every signal blocked burns
//                                       ~300 ms under a frame record whose return
//                                       address points at unmapped memory, so that a
//                                       frame-pointer walk faults in the handler
//   agent_mask_program sigwait          a worker blocks everything and takes four
//                                       SIGUSR1 with sigwait, sigwaitinfo,
//                                       sigtimedwait and a signalfd, while the main
//                                       thread sleeps between sending them
//   agent_mask_program unseen           a SIGEV_THREAD timer's callback (a thread the
//                                       C library starts itself) burns ~300 ms
// It prints "thread I tid T cpu_ns N" for the threads that burn (I: 1, 2 in creation
// order) and "waited S1 S2 S3 S4" for sigwait (the signal numbers each call returned).
#include <pthread.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace {

constexpr uint64_t kMs = 1000000;
volatile double g_sink;

uint64_t ThreadCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

__attribute__((noinline)) void Burn(uint64_t cpu_ns) {
  const uint64_t until = ThreadCpuNs() + cpu_ns;
  double x = 0;
  while (ThreadCpuNs() < until) {
    for (int i = 0; i < 20000; ++i) x += i * 0.5;
  }
  g_sink = x;
}

void Report(int index) {
  std::printf("thread %d tid %ld cpu_ns %llu\n", index, syscall(SYS_gettid),
              static_cast<unsigned long long>(ThreadCpuNs()));
  std::fflush(stdout);
}

// Sleeps `ms` of wall time whatever signals interrupt it.
void SleepMs(uint64_t ms) {
  timespec until;
  clock_gettime(CLOCK_MONOTONIC, &until);
  until.tv_nsec += static_cast<long>(ms * kMs % 1000000000);
  until.tv_sec += static_cast<time_t>(ms * kMs / 1000000000) + until.tv_nsec / 1000000000;
  until.tv_nsec %= 1000000000;
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, nullptr) == EINTR) {
  }
}

// ---- blocked-workers: xz's mythread_create, then masks set inside the workers ----

void* SetmaskWorker(void*) {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, nullptr);
  Burn(300 * kMs);
  Report(1);
  return nullptr;
}

void* BlockWorker(void*) {
  sigset_t all;
  sigfillset(&all);
  sigprocmask(SIG_BLOCK, &all, nullptr);
  Burn(300 * kMs);
  Report(2);
  return nullptr;
}

// Creates the thread with every signal blocked, as xz does, so it starts with a full mask.
int CreateUnderFullMask(pthread_t* thread, void* (*routine)(void*)) {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  const int rc = pthread_create(thread, nullptr, routine, nullptr);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return rc;
}

int BlockedWorkers() {
  pthread_t first, second;
  if (CreateUnderFullMask(&first, SetmaskWorker) != 0) return 90;
  if (CreateUnderFullMask(&second, BlockWorker) != 0) return 90;
  pthread_join(first, nullptr);
  pthread_join(second, nullptr);
  return 0;
}

// ---- raw-blocked: a mask the interposed functions never see ----

void* RawBlockedWorker(void*) {
  const uint64_t all = ~0ull;
  syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, nullptr, sizeof all);
  Burn(300 * kMs);
  Report(1);
  return nullptr;
}

int RawBlocked() {
  pthread_t worker;
  if (pthread_create(&worker, nullptr, RawBlockedWorker, nullptr) != 0) return 90;
  pthread_join(worker, nullptr);
  return 0;
}

// ---- bad-frames: the unwinder faults in a thread that blocks SIGSEGV ----

// Spins `iterations` times with rbp pointing at a frame record on the stack whose
// return address is 0x8000, unmapped: a frame-pointer walk reads the code before it to
// check for a call instruction, and faults.
__attribute__((noinline)) void SpinUnderBadFrame(uint64_t iterations) {
  asm volatile(
      "push %%rbp\n\t"
      "pushq $0x8000\n\t"
      "push %%rbp\n\t"
      "mov %%rsp, %%rbp\n\t"
      "1:\n\t"
      "dec %0\n\t"
      "jnz 1b\n\t"
      "add $16, %%rsp\n\t"
      "pop %%rbp\n\t"
      : "+r"(iterations)
      :
      : "cc", "memory");
}

void* BadFramesWorker(void*) {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, nullptr);  // SIGSEGV and SIGBUS too
  const uint64_t until = ThreadCpuNs() + 300 * kMs;
  while (ThreadCpuNs() < until) SpinUnderBadFrame(1000000);
  Report(1);
  return nullptr;
}

int BadFrames() {
  pthread_t worker;
  if (pthread_create(&worker, nullptr, BadFramesWorker, nullptr) != 0) return 90;
  pthread_join(worker, nullptr);
  return 0;
}

// ---- sigwait: the program takes its signals synchronously ----

std::atomic<int> g_received{0};
int g_waited[4] = {};

void* SigwaitWorker(void*) {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, nullptr);
  sigwait(&all, &g_waited[0]);
  g_received.fetch_add(1);
  siginfo_t info;
  // sigwaitinfo and sigtimedwait are never restarted after a handler (signal(7)).
  while ((g_waited[1] = sigwaitinfo(&all, &info)) < 0 && errno == EINTR) {
  }
  g_received.fetch_add(1);
  const timespec ten_seconds{10, 0};
  while ((g_waited[2] = sigtimedwait(&all, &info, &ten_seconds)) < 0 && errno == EINTR) {
  }
  g_received.fetch_add(1);
  const int fd = signalfd(-1, &all, SFD_CLOEXEC);
  signalfd_siginfo record;
  while (read(fd, &record, sizeof record) < 0 && errno == EINTR) {
  }
  g_waited[3] = static_cast<int>(record.ssi_signo);
  close(fd);
  g_received.fetch_add(1);
  return nullptr;
}

int Sigwait() {
  pthread_t worker;
  sigset_t usr1, old;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &usr1, &old);  // the worker inherits it blocked from the start
  if (pthread_create(&worker, nullptr, SigwaitWorker, nullptr) != 0) return 90;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  for (int sent = 0; sent < 4; ++sent) {
    SleepMs(100);  // the worker waits, sampled by the wall clock meanwhile
    pthread_kill(worker, SIGUSR1);
    while (g_received.load() == sent) SleepMs(1);
  }
  pthread_join(worker, nullptr);
  std::printf("waited %d %d %d %d\n", g_waited[0], g_waited[1], g_waited[2], g_waited[3]);
  return 0;
}

// ---- unseen: a thread the C library starts ----

std::atomic<int> g_callback_done{0};

void TimerCallback(union sigval) {
  Burn(300 * kMs);
  Report(1);
  g_callback_done.store(1);
}

int Unseen() {
  sigevent ev;
  std::memset(&ev, 0, sizeof ev);
  ev.sigev_notify = SIGEV_THREAD;
  ev.sigev_notify_function = TimerCallback;
  timer_t timer;
  if (timer_create(CLOCK_MONOTONIC, &ev, &timer) != 0) return 91;
  const itimerspec once{{0, 0}, {0, 1000000}};
  timer_settime(timer, 0, &once, nullptr);
  while (g_callback_done.load() == 0) SleepMs(5);
  timer_delete(timer);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (std::strcmp(mode, "blocked-workers") == 0) return BlockedWorkers();
  if (std::strcmp(mode, "raw-blocked") == 0) return RawBlocked();
  if (std::strcmp(mode, "bad-frames") == 0) return BadFrames();
  if (std::strcmp(mode, "sigwait") == 0) return Sigwait();
  if (std::strcmp(mode, "unseen") == 0) return Unseen();
  std::fprintf(stderr, "unknown mode %s\n", mode);
  return 2;
}
