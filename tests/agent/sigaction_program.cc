// A program that changes signal dispositions from its own signal handlers, which POSIX
// allows, while other threads do the same and the agent samples it (issue 12, row 9a).
// Run by agent_sigaction_e2e_test under the preloaded agent. Usage:
//   agent_sigaction_program [ITERATIONS]
//
// 1. In a SIGUSR1 handler, it installs its own SIGPROF handler: it claims the signal
//    the agent samples with, from inside a handler.
// 2. Four workers each run ITERATIONS rounds (default 20000) of sigaction/signal calls
//    on a signal of every kind the agent interposes: SIGSEGV (the unwinder's fault
//    guard), SIGTERM (a signal the agent flushes on before the program dies of it),
//    SIGPROF (claimed from the agent in step 1), SIGUSR2 (none of the agent's). A
//    sender thread interrupts the workers with SIGUSR1 as fast as it can, from the
//    moment each exists (so also while the agent registers it), and an
//    ITIMER_PROF timer with SIGPROF; both handlers make the same calls. Every action
//    installed is one of two variants whose handler, mask and flags go together, so
//    an action read back in pieces of two (a torn read) is seen.
// 3. The kernel's actions (read with a raw rt_sigaction system call, which the agent
//    does not interpose) agree with what sigaction reports.
//
// The program replaces malloc and its relatives and counts the calls made while one
// of its handlers runs (directly or through the agent under it): a handler must
// never allocate, and the interposed sigaction and signal are called in handlers.
//
// It prints "rounds R handled H mallocs_in_handler M torn T kernel_mismatch K" and
// exits 0 when M, T and K are 0. A deadlock shows as the test's timeout.
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

// ---- Counting allocations made inside the program's handlers --------------------------

extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
void __libc_free(void*);
}

namespace {

__thread int t_in_handler __attribute__((tls_model("initial-exec"))) = 0;
std::atomic<uint64_t> g_mallocs_in_handler{0};

void NoteAllocation() {
  if (t_in_handler != 0) g_mallocs_in_handler.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

extern "C" {
void* malloc(size_t size) {
  NoteAllocation();
  return __libc_malloc(size);
}
void* calloc(size_t n, size_t size) {
  NoteAllocation();
  return __libc_calloc(n, size);
}
void* realloc(void* p, size_t size) {
  NoteAllocation();
  return __libc_realloc(p, size);
}
void* memalign(size_t alignment, size_t size) {
  NoteAllocation();
  return __libc_memalign(alignment, size);
}
void* aligned_alloc(size_t alignment, size_t size) {
  NoteAllocation();
  return __libc_memalign(alignment, size);
}
int posix_memalign(void** out, size_t alignment, size_t size) {
  NoteAllocation();
  void* p = __libc_memalign(alignment, size);
  if (p == nullptr) return 12;  // ENOMEM
  *out = p;
  return 0;
}
void free(void* p) {
  // free in a handler can corrupt the heap as well as malloc can.
  if (p != nullptr) NoteAllocation();
  __libc_free(p);
}
}

namespace {

constexpr int kWorkers = 4;

std::atomic<uint64_t> g_handled{0};
std::atomic<uint64_t> g_torn{0};
std::atomic<bool> g_stop{false};     // the sender is to stop
std::atomic<bool> g_release{false};  // the sender has ended: workers may end
std::atomic<int> g_done{0};          // workers through their rounds
std::atomic<bool> g_claimed{false};

void SegvA(int) {}
void SegvB(int) {}
void TermA(int) {}
void TermB(int) {}
void Usr2A(int) {}
void Usr2B(int) {}
void ProfHandler(int);

// Variant 0: mask {SIGWINCH}, SA_RESTART. Variant 1: mask {SIGURG}, no flags.
struct sigaction Variant(void (*handler)(int), int variant) {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  sigaddset(&sa.sa_mask, variant == 0 ? SIGWINCH : SIGURG);
  sa.sa_flags = variant == 0 ? SA_RESTART : 0;
  return sa;
}

// Whether `sa` is the initial action (SIG_DFL) or one of the variants of a or b whole.
void CheckWhole(const struct sigaction& sa, void (*a)(int), void (*b)(int)) {
  if (sa.sa_handler == SIG_DFL) return;
  const bool winch = sigismember(&sa.sa_mask, SIGWINCH) == 1;
  const bool urg = sigismember(&sa.sa_mask, SIGURG) == 1;
  const bool restart = (sa.sa_flags & SA_RESTART) != 0;
  const bool handler_ok = sa.sa_handler == a || sa.sa_handler == b;
  const bool variant0 = winch && !urg && restart;
  const bool variant1 = urg && !winch && !restart;
  if (!handler_ok || !(variant0 || variant1)) g_torn.fetch_add(1, std::memory_order_relaxed);
}

// One round of calls on every kind of signal; `salt` picks the variants.
void Round(unsigned salt) {
  struct sigaction sa, old;
  sa = Variant((salt & 1) ? SegvB : SegvA, (salt >> 1) & 1);
  sigaction(SIGSEGV, &sa, &old);
  CheckWhole(old, SegvA, SegvB);
  sa = Variant((salt & 2) ? TermB : TermA, (salt >> 2) & 1);
  sigaction(SIGTERM, &sa, &old);
  CheckWhole(old, TermA, TermB);
  if (g_claimed.load(std::memory_order_acquire)) {
    sa = Variant(ProfHandler, salt & 1);
    sigaction(SIGPROF, &sa, &old);
    CheckWhole(old, ProfHandler, ProfHandler);
  }
  signal(SIGUSR2, (salt & 4) ? Usr2B : Usr2A);
  sigaction(SIGUSR2, nullptr, &old);
  sigaction(SIGSEGV, nullptr, &old);
  CheckWhole(old, SegvA, SegvB);
}

void InHandler(int signo) {
  ++t_in_handler;
  Round(static_cast<unsigned>(signo) * 2654435761u + static_cast<unsigned>(g_handled.load()));
  g_handled.fetch_add(1, std::memory_order_relaxed);
  --t_in_handler;
}

void ProfHandler(int signo) { InHandler(signo); }
void Usr1Handler(int signo) { InHandler(signo); }

// Step 1: the claim, made in a handler.
void ClaimHandler(int) {
  ++t_in_handler;
  struct sigaction sa = Variant(ProfHandler, 0);
  sigaction(SIGPROF, &sa, nullptr);
  g_claimed.store(true, std::memory_order_release);
  --t_in_handler;
}

struct Worker {
  pthread_t thread;
  std::atomic<bool> created{false};   // `thread` is valid
  std::atomic<bool> finished{false};  // through its rounds
  long rounds = 0;
};
Worker g_workers[kWorkers];

void* WorkerMain(void* arg) {
  auto* w = static_cast<Worker*>(arg);
  for (long i = 0; i < w->rounds; ++i) Round(static_cast<unsigned>(i));
  w->finished.store(true, std::memory_order_release);
  // Alive until the sender has stopped, so that it never signals a thread that ended.
  g_done.fetch_add(1, std::memory_order_acq_rel);
  while (!g_release.load(std::memory_order_acquire)) sched_yield();
  return nullptr;
}

void* SenderMain(void*) {
  unsigned next = 0;
  while (!g_stop.load(std::memory_order_acquire)) {
    // From the moment the thread exists: its handler also interrupts the agent
    // registering it (before its start routine runs).
    Worker& w = g_workers[next++ % kWorkers];
    if (w.created.load(std::memory_order_acquire) && !w.finished.load(std::memory_order_acquire)) {
      pthread_kill(w.thread, SIGUSR1);
    }
  }
  return nullptr;
}

// The kernel's own action (struct kernel_sigaction of the rt_sigaction system call).
struct KernelAction {
  void* handler;
  unsigned long flags;
  void* restorer;
  uint64_t mask;
};
KernelAction KernelActionOf(int signo) {
  KernelAction k{};
  syscall(SYS_rt_sigaction, signo, nullptr, &k, sizeof k.mask);
  return k;
}
bool KernelMasked(const KernelAction& k, int signo) { return ((k.mask >> (signo - 1)) & 1) != 0; }

// SIGTERM: the agent's handler in the kernel, with the program's SA_RESTART. SIGPROF
// (once the agent has moved away from it): the program's own action. SIGUSR2: the
// program's action, untouched.
int KernelMismatches() {
  int mismatches = 0;
  struct sigaction view;
  sigaction(SIGTERM, nullptr, &view);
  const KernelAction term = KernelActionOf(SIGTERM);
  if (((term.flags & SA_RESTART) != 0) != ((view.sa_flags & SA_RESTART) != 0)) ++mismatches;
  sigaction(SIGPROF, nullptr, &view);
  const KernelAction prof = KernelActionOf(SIGPROF);
  if (prof.handler == reinterpret_cast<void*>(view.sa_handler) &&
      (KernelMasked(prof, SIGWINCH) != (sigismember(&view.sa_mask, SIGWINCH) == 1) ||
       ((prof.flags & SA_RESTART) != 0) != ((view.sa_flags & SA_RESTART) != 0))) {
    ++mismatches;
  }
  sigaction(SIGUSR2, nullptr, &view);
  if (KernelActionOf(SIGUSR2).handler != reinterpret_cast<void*>(view.sa_handler)) ++mismatches;
  return mismatches;
}

}  // namespace

int main(int argc, char** argv) {
  const long rounds = argc > 1 ? std::atol(argv[1]) : 200000;

  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = ClaimHandler;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGUSR1, &sa, nullptr);
  raise(SIGUSR1);  // step 1
  sa.sa_handler = Usr1Handler;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGUSR1, &sa, nullptr);

  itimerval tv{{0, 100}, {0, 100}};
  setitimer(ITIMER_PROF, &tv, nullptr);
  pthread_t sender;
  pthread_create(&sender, nullptr, SenderMain, nullptr);
  for (Worker& w : g_workers) {
    w.rounds = rounds;
    pthread_create(&w.thread, nullptr, WorkerMain, &w);
    w.created.store(true, std::memory_order_release);
  }
  while (g_done.load(std::memory_order_acquire) < kWorkers) sched_yield();
  g_stop.store(true, std::memory_order_release);
  pthread_join(sender, nullptr);
  g_release.store(true, std::memory_order_release);
  for (Worker& w : g_workers) pthread_join(w.thread, nullptr);
  itimerval off{};
  setitimer(ITIMER_PROF, &off, nullptr);

  const int mismatches = KernelMismatches();
  std::printf("rounds %ld handled %llu mallocs_in_handler %llu torn %llu kernel_mismatch %d\n",
              rounds * kWorkers, static_cast<unsigned long long>(g_handled.load()),
              static_cast<unsigned long long>(g_mallocs_in_handler.load()),
              static_cast<unsigned long long>(g_torn.load()), mismatches);
  return g_mallocs_in_handler.load() == 0 && g_torn.load() == 0 && mismatches == 0 ? 0 : 1;
}
