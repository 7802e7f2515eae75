// Programs with known lock shapes for the lock-blame end-to-end tests (issue 14,
// lock_blame_e2e_test.cc). Threads are ordered without sleeps: a thread that must be
// blocked in a lock call before another goes on is waited for until the kernel shows it
// asleep (/proc/self/task/TID/stat state S), or, for a spinning waiter, until it has
// announced it is about to lock. Each mode prints facts the test reads:
//   fn NAME LO HI      the address range of a function (dladdr1; linked -rdynamic)
//   lock NAME ADDR     a lock object's address
//   result NAME VALUE  what the program saw (return codes)
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <vector>

namespace {

pid_t Tid() { return static_cast<pid_t>(syscall(SYS_gettid)); }

void PrintFunction(const char* name, const void* function) {
  Dl_info info;
  void* entry = nullptr;
  if (dladdr1(function, &info, &entry, RTLD_DL_SYMENT) == 0) entry = nullptr;
  const auto* symbol = static_cast<const ElfW(Sym)*>(entry);
  if (symbol == nullptr) {
    fprintf(stderr, "no symbol size for %s (link with -rdynamic)\n", name);
    exit(2);
  }
  const uintptr_t lo = reinterpret_cast<uintptr_t>(info.dli_saddr);
  printf("fn %s %" PRIuPTR " %" PRIuPTR "\n", name, lo, lo + symbol->st_size);
}

void PrintLock(const char* name, const void* lock) {
  printf("lock %s %" PRIuPTR "\n", name, reinterpret_cast<uintptr_t>(lock));
}

// True when thread `tid` (of process `pid`, 0: this one) sleeps in the kernel.
bool Asleep(pid_t tid, pid_t pid = 0) {
  char path[96];
  if (pid == 0) {
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", tid);
  } else {
    snprintf(path, sizeof path, "/proc/%d/task/%d/stat", pid, tid);
  }
  const int fd = open(path, O_RDONLY);
  if (fd < 0) return false;
  char buf[512];
  const ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  const char* close_paren = strrchr(buf, ')');
  return close_paren != nullptr && close_paren[1] == ' ' && close_paren[2] == 'S';
}

void WaitAsleep(pid_t tid, pid_t pid = 0) {
  while (!Asleep(tid, pid)) sched_yield();
}

uint64_t CpuNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// Burns `ns` of this thread's CPU time.
__attribute__((noinline)) void Burn(uint64_t ns) {
  const uint64_t end = CpuNs() + ns;
  volatile uint64_t sink = 0;
  while (CpuNs() < end) {
    for (int i = 0; i < 1000; ++i) sink = sink + i;
  }
}

std::atomic<pid_t> g_tids[4];
// Waiters that have passed the barrier and go on to lock: from then on the only place
// they sleep is the lock (a thread just woken from the barrier may still show S).
std::atomic<int> g_arrived{0};

// Until `count` threads have arrived, and then until thread `tid` sleeps.
void WaitBlocked(int count, pid_t tid) {
  while (g_arrived.load() < count) sched_yield();
  WaitAsleep(tid);
}

// --- holder: one thread holds L in hold_long() while two wait in wait_here() ------------
pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_barrier_t g_round;
void WaitBlocked(int count, pid_t tid);
void Burn(uint64_t ns);
constexpr int kRounds = 20;
constexpr uint64_t kHoldNs = 10000000;  // 10 ms of CPU per hold

}  // namespace

// Exported (the program is linked with -rdynamic) so that dladdr1 finds their sizes.
extern "C" __attribute__((noinline)) void hold_long(int waiters, int round) {
  pthread_mutex_lock(&g_lock);
  pthread_barrier_wait(&g_round);  // the waiters may start
  for (int w = 1; w <= waiters; ++w) WaitBlocked(waiters * (round + 1), g_tids[w].load());
  Burn(kHoldNs);
  pthread_mutex_unlock(&g_lock);
}

extern "C" __attribute__((noinline)) void wait_here() {
  pthread_mutex_lock(&g_lock);
  Burn(100000);  // a short critical section of its own
  pthread_mutex_unlock(&g_lock);
}

namespace {

void* Waiter(void* arg) {
  const int index = static_cast<int>(reinterpret_cast<intptr_t>(arg));
  g_tids[index].store(Tid());
  for (int round = 0; round < kRounds; ++round) {
    pthread_barrier_wait(&g_round);
    g_arrived.fetch_add(1);
    wait_here();
    pthread_barrier_wait(&g_round);  // the round is over
  }
  return nullptr;
}

int Holder(int waiters) {
  PrintFunction("hold_long", reinterpret_cast<const void*>(&hold_long));
  PrintFunction("wait_here", reinterpret_cast<const void*>(&wait_here));
  PrintLock("L", &g_lock);
  pthread_barrier_init(&g_round, nullptr, static_cast<unsigned>(waiters + 1));
  std::vector<pthread_t> threads(static_cast<size_t>(waiters));
  for (int w = 0; w < waiters; ++w) {
    pthread_create(&threads[w], nullptr, Waiter, reinterpret_cast<void*>(static_cast<intptr_t>(w + 1)));
  }
  for (int round = 0; round < kRounds; ++round) {
    hold_long(waiters, round);
    pthread_barrier_wait(&g_round);
  }
  if (waiters == 0) {
    for (int round = 0; round < kRounds; ++round) wait_here();
  }
  for (pthread_t& t : threads) pthread_join(t, nullptr);
  return 0;
}

// --- trylock and timedlock ----------------------------------------------------------------
pthread_barrier_t g_pair;

void* TryLocker(void*) {
  pthread_barrier_wait(&g_pair);  // L is held
  int busy = 0;
  for (int i = 0; i < 1000; ++i) busy += pthread_mutex_trylock(&g_lock) == EBUSY;
  printf("result trylock_busy %d\n", busy);
  pthread_barrier_wait(&g_pair);
  return nullptr;
}

int Trylock() {
  pthread_barrier_init(&g_pair, nullptr, 2);
  pthread_mutex_lock(&g_lock);
  pthread_t t;
  pthread_create(&t, nullptr, TryLocker, nullptr);
  pthread_barrier_wait(&g_pair);
  pthread_barrier_wait(&g_pair);
  pthread_mutex_unlock(&g_lock);
  pthread_join(t, nullptr);
  return 0;
}

void* TimedLocker(void*) {
  pthread_barrier_wait(&g_pair);  // L is held, and stays held until we are done
  int timeouts = 0;
  for (int i = 0; i < 3; ++i) {
    timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_nsec += 5000000;  // 5 ms
    if (deadline.tv_nsec >= 1000000000) {
      deadline.tv_sec += 1;
      deadline.tv_nsec -= 1000000000;
    }
    timeouts += pthread_mutex_timedlock(&g_lock, &deadline) == ETIMEDOUT;
  }
  printf("result timeouts %d\n", timeouts);
  pthread_barrier_wait(&g_pair);
  return nullptr;
}

int Timedlock() {
  PrintLock("L", &g_lock);
  pthread_barrier_init(&g_pair, nullptr, 2);
  pthread_mutex_lock(&g_lock);
  pthread_t t;
  pthread_create(&t, nullptr, TimedLocker, nullptr);
  pthread_barrier_wait(&g_pair);
  pthread_barrier_wait(&g_pair);
  pthread_mutex_unlock(&g_lock);
  pthread_join(t, nullptr);
  return 0;
}

// --- recursive mutex: held twice by the holder while a waiter waits -------------------------
pthread_mutex_t g_recursive;

void* RecursiveWaiter(void*) {
  g_tids[1].store(Tid());
  pthread_barrier_wait(&g_pair);
  g_arrived.fetch_add(1);
  pthread_mutex_lock(&g_recursive);
  pthread_mutex_lock(&g_recursive);
  pthread_mutex_unlock(&g_recursive);
  pthread_mutex_unlock(&g_recursive);
  return nullptr;
}

int Recursive() {
  PrintFunction("hold_long", reinterpret_cast<const void*>(&hold_long));
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&g_recursive, &attr);
  PrintLock("R", &g_recursive);
  pthread_barrier_init(&g_pair, nullptr, 2);
  pthread_t t;
  pthread_create(&t, nullptr, RecursiveWaiter, nullptr);
  for (int round = 0; round < kRounds; ++round) {
    pthread_mutex_lock(&g_recursive);
    pthread_mutex_lock(&g_recursive);
    if (round == 0) {
      pthread_barrier_wait(&g_pair);
      WaitBlocked(1, g_tids[1].load());
    }
    Burn(kHoldNs / 4);
    pthread_mutex_unlock(&g_recursive);
    pthread_mutex_unlock(&g_recursive);
  }
  pthread_join(t, nullptr);
  return 0;
}

// --- rwlock: a writer holds while two readers wait; then readers hold while a writer waits --
pthread_rwlock_t g_rw = PTHREAD_RWLOCK_INITIALIZER;

void* Reader(void* arg) {
  const int index = static_cast<int>(reinterpret_cast<intptr_t>(arg));
  g_tids[index].store(Tid());
  pthread_barrier_wait(&g_round);  // the writer holds it
  g_arrived.fetch_add(1);
  pthread_rwlock_rdlock(&g_rw);
  pthread_barrier_wait(&g_round);  // both readers hold it
  pthread_barrier_wait(&g_round);  // the writer is waiting
  Burn(kHoldNs);
  pthread_rwlock_unlock(&g_rw);
  return nullptr;
}

void* LateWriter(void*) {
  g_tids[3].store(Tid());
  pthread_rwlock_wrlock(&g_rw);
  pthread_rwlock_unlock(&g_rw);
  return nullptr;
}

int Rwlock() {
  PrintLock("RW", &g_rw);
  pthread_barrier_init(&g_round, nullptr, 3);
  pthread_t readers[2], writer;
  pthread_rwlock_wrlock(&g_rw);
  for (int r = 0; r < 2; ++r) {
    pthread_create(&readers[r], nullptr, Reader, reinterpret_cast<void*>(static_cast<intptr_t>(r + 1)));
  }
  pthread_barrier_wait(&g_round);
  WaitBlocked(2, g_tids[1].load());
  WaitBlocked(2, g_tids[2].load());
  Burn(kHoldNs);
  pthread_rwlock_unlock(&g_rw);
  pthread_barrier_wait(&g_round);
  pthread_create(&writer, nullptr, LateWriter, nullptr);
  while (g_tids[3].load() == 0) sched_yield();
  WaitAsleep(g_tids[3].load());
  pthread_barrier_wait(&g_round);
  for (pthread_t& t : readers) pthread_join(t, nullptr);
  pthread_join(writer, nullptr);
  return 0;
}

// --- spinlock: a waiter spins while the holder burns --------------------------------------
pthread_spinlock_t g_spin;
std::atomic<int> g_spin_round{-1};

void* SpinWaiter(void*) {
  for (int round = 0; round < kRounds; ++round) {
    while (g_spin_round.load() != round) sched_yield();
    pthread_spin_lock(&g_spin);
    pthread_spin_unlock(&g_spin);
    g_spin_round.store(-1);
  }
  return nullptr;
}

int Spin() {
  PrintLock("S", const_cast<const int*>(&g_spin));
  pthread_spin_init(&g_spin, PTHREAD_PROCESS_PRIVATE);
  pthread_t t;
  pthread_create(&t, nullptr, SpinWaiter, nullptr);
  for (int round = 0; round < kRounds; ++round) {
    pthread_spin_lock(&g_spin);
    g_spin_round.store(round);
    Burn(kHoldNs / 2);
    pthread_spin_unlock(&g_spin);
    while (g_spin_round.load() != -1) sched_yield();
  }
  pthread_join(t, nullptr);
  return 0;
}

// --- condition variable: the wait for the signal is not lock wait, the re-acquisition is ----
pthread_cond_t g_cond = PTHREAD_COND_INITIALIZER;
int g_cond_waiting = 0;  // under g_lock
int g_cond_ready = 0;
int g_cond_done = 0;  // rounds the waiter finished, under g_lock

// The spans in which the agent may count lock wait, as the program measures them
// (CLOCK_MONOTONIC, summed over both threads): from each signal to the waiter's return
// from pthread_cond_wait, and every pthread_mutex_lock call. The agent's own marks lie
// inside these spans, so its total wait is at most their sum, whatever the load.
uint64_t g_signal_ns = 0;
std::atomic<uint64_t> g_wait_spans_ns{0};

uint64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

void LockMeasured(pthread_mutex_t* m) {
  const uint64_t start = MonotonicNs();
  pthread_mutex_lock(m);
  g_wait_spans_ns.fetch_add(MonotonicNs() - start);
}

void* CondWaiter(void*) {
  for (int round = 0; round < kRounds / 2; ++round) {
    LockMeasured(&g_lock);
    g_cond_waiting = 1;
    while (g_cond_ready == 0) pthread_cond_wait(&g_cond, &g_lock);
    g_wait_spans_ns.fetch_add(MonotonicNs() - g_signal_ns);
    g_cond_ready = 0;
    g_cond_waiting = 0;
    ++g_cond_done;
    pthread_mutex_unlock(&g_lock);
  }
  return nullptr;
}

int Cond() {
  PrintLock("L", &g_lock);
  pthread_t t;
  pthread_create(&t, nullptr, CondWaiter, nullptr);
  for (int round = 0; round < kRounds / 2; ++round) {
    for (;;) {  // until the waiter is inside pthread_cond_wait
      LockMeasured(&g_lock);
      const int waiting = g_cond_waiting;
      pthread_mutex_unlock(&g_lock);
      if (waiting) break;
      sched_yield();
    }
    Burn(4 * kHoldNs);  // the waiter waits for the signal: not lock wait
    LockMeasured(&g_lock);
    g_cond_ready = 1;
    g_signal_ns = MonotonicNs();
    pthread_cond_signal(&g_cond);
    Burn(kHoldNs);  // the woken waiter waits for the mutex: lock wait
    pthread_mutex_unlock(&g_lock);
    for (;;) {  // until the waiter is done with this round
      LockMeasured(&g_lock);
      const int done = g_cond_done;
      pthread_mutex_unlock(&g_lock);
      if (done == round + 1) break;
      sched_yield();
    }
  }
  pthread_join(t, nullptr);
  printf("result wait_spans_ns %llu\n", static_cast<unsigned long long>(g_wait_spans_ns.load()));
  return 0;
}

// --- a lock taken in a signal handler while the interrupted code is in the bookkeeping ---
pthread_mutex_t g_handler_lock = PTHREAD_MUTEX_INITIALIZER;
std::atomic<int> g_stop{0};
std::atomic<uint64_t> g_handled{0};

// Only the handlers lock it (the interrupted code never holds it).
void OnSignal(int) {
  pthread_mutex_lock(&g_handler_lock);
  pthread_mutex_unlock(&g_handler_lock);
  g_handled.fetch_add(1);
}

void* Contender(void*) {
  while (!g_stop.load()) {
    pthread_mutex_lock(&g_lock);
    pthread_mutex_unlock(&g_lock);
  }
  return nullptr;
}

int SignalLock() {
  struct sigaction sa = {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGUSR1, &sa, nullptr);
  pthread_t threads[2];
  for (pthread_t& t : threads) pthread_create(&t, nullptr, Contender, nullptr);
  for (int i = 0; i < 20000; ++i) {
    for (pthread_t& t : threads) pthread_kill(t, SIGUSR1);
    if (i % 64 == 0) sched_yield();
  }
  // Pending signals of one kind coalesce: on a loaded machine the 40000 sent above may
  // have been handled fewer than 1000 times, and waiting without sending more would
  // wait forever (a clean run's timeout). So keep sending until enough were handled.
  while (g_handled.load() < 1000) {
    for (pthread_t& t : threads) pthread_kill(t, SIGUSR1);
    sched_yield();
  }
  g_stop.store(1);
  for (pthread_t& t : threads) pthread_join(t, nullptr);
  printf("result handled_enough 1\n");
  return 0;
}

// --- unlock of a mutex the thread does not hold --------------------------------------------
void* UnheldWaiter(void*) {
  g_tids[1].store(Tid());
  pthread_mutex_lock(&g_lock);
  pthread_mutex_unlock(&g_lock);
  return nullptr;
}

int UnlockUnheld() {
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ERRORCHECK);
  pthread_mutex_t checked;
  pthread_mutex_init(&checked, &attr);
  printf("result errorcheck_unlock %d\n", pthread_mutex_unlock(&checked));
  pthread_mutex_t plain = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_unlock(&plain);  // undefined behaviour; glibc lets it pass
  // With a registered waiter somewhere (the unlock's contended path runs).
  pthread_mutex_lock(&g_lock);
  pthread_t t;
  pthread_create(&t, nullptr, UnheldWaiter, nullptr);
  while (g_tids[1].load() == 0) sched_yield();
  WaitAsleep(g_tids[1].load());
  printf("result errorcheck_unlock_contended %d\n", pthread_mutex_unlock(&checked));
  pthread_mutex_unlock(&plain);
  pthread_mutex_unlock(&g_lock);
  pthread_join(t, nullptr);
  return 0;
}

// --- thousands of distinct locks, each contended once ---------------------------------------
constexpr int kManyLocks = 3000;
pthread_mutex_t* g_many = nullptr;
std::atomic<int> g_many_next{-1};

void* ManyWaiter(void*) {
  g_tids[1].store(Tid());
  for (int i = 0; i < kManyLocks; ++i) {
    while (g_many_next.load() != i) sched_yield();
    pthread_mutex_lock(&g_many[i]);
    pthread_mutex_unlock(&g_many[i]);
  }
  return nullptr;
}

int Many() {
  g_many = static_cast<pthread_mutex_t*>(calloc(kManyLocks, sizeof(pthread_mutex_t)));
  for (int i = 0; i < kManyLocks; ++i) pthread_mutex_init(&g_many[i], nullptr);
  printf("lock first %" PRIuPTR "\n", reinterpret_cast<uintptr_t>(&g_many[0]));
  printf("lock last %" PRIuPTR "\n", reinterpret_cast<uintptr_t>(&g_many[kManyLocks - 1]));
  pthread_t t;
  pthread_create(&t, nullptr, ManyWaiter, nullptr);
  while (g_tids[1].load() == 0) sched_yield();
  for (int i = 0; i < kManyLocks; ++i) {
    pthread_mutex_lock(&g_many[i]);
    g_many_next.store(i);
    WaitAsleep(g_tids[1].load());  // blocked in the lock (it sleeps in nothing else)
    pthread_mutex_unlock(&g_many[i]);
  }
  pthread_join(t, nullptr);
  return 0;
}

// --- a lock destroyed, and a new one initialized at its address, both contended --------
// Each life: the main thread holds it while a second thread waits for it, once. The
// second life starts while the first's record still exists (no waiter left on it).
alignas(64) pthread_mutex_t g_reused;
std::atomic<int> g_reuse_turn{0};

void* ReuseWaiter(void*) {
  g_tids[1].store(Tid());
  for (int life = 1; life <= 2; ++life) {
    while (g_reuse_turn.load() != life) sched_yield();
    pthread_mutex_lock(&g_reused);
    pthread_mutex_unlock(&g_reused);
    g_reuse_turn.store(-life);
  }
  return nullptr;
}

int Reuse() {
  printf("lock reused %" PRIuPTR "\n", reinterpret_cast<uintptr_t>(&g_reused));
  pthread_t t;
  pthread_create(&t, nullptr, ReuseWaiter, nullptr);
  while (g_tids[1].load() == 0) sched_yield();
  for (int life = 1; life <= 2; ++life) {
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    // The second life is another kind of mutex: nothing of the first may carry over.
    if (life == 2) pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ERRORCHECK);
    pthread_mutex_init(&g_reused, &attr);
    pthread_mutexattr_destroy(&attr);
    pthread_mutex_lock(&g_reused);
    g_reuse_turn.store(life);
    WaitAsleep(g_tids[1].load());
    pthread_mutex_unlock(&g_reused);
    while (g_reuse_turn.load() != -life) sched_yield();
    if (pthread_mutex_destroy(&g_reused) != 0) return 3;
  }
  pthread_join(t, nullptr);
  return 0;
}

// --- acquisitions per lock: one contention, then many uncontended acquisitions ---------
pthread_mutex_t g_hot = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t g_quiet = PTHREAD_MUTEX_INITIALIZER;

void* HotWaiter(void*) {
  g_tids[1].store(Tid());
  pthread_mutex_lock(&g_hot);
  pthread_mutex_unlock(&g_hot);
  return nullptr;
}

int Acquire() {
  printf("lock hot %" PRIuPTR "\n", reinterpret_cast<uintptr_t>(&g_hot));
  printf("lock quiet %" PRIuPTR "\n", reinterpret_cast<uintptr_t>(&g_quiet));
  pthread_mutex_lock(&g_hot);
  pthread_t t;
  pthread_create(&t, nullptr, HotWaiter, nullptr);
  while (g_tids[1].load() == 0) sched_yield();
  WaitAsleep(g_tids[1].load());
  pthread_mutex_unlock(&g_hot);
  pthread_join(t, nullptr);
  for (int i = 0; i < 200000; ++i) {
    pthread_mutex_lock(&g_hot);
    pthread_mutex_unlock(&g_hot);
    pthread_mutex_lock(&g_quiet);
    pthread_mutex_unlock(&g_quiet);
  }
  return 0;
}

// --- fork with a process-shared mutex: the child waits while the parent holds it ---------
int ForkShared() {
  auto* shared = static_cast<pthread_mutex_t*>(
      mmap(nullptr, sizeof(pthread_mutex_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
  pthread_mutex_init(shared, &attr);
  // A waiter of the parent's is registered when the process forks: the child starts
  // with no waiter (and its own locks still work).
  pthread_mutex_lock(&g_lock);
  pthread_t t;
  pthread_create(&t, nullptr, UnheldWaiter, nullptr);
  while (g_tids[1].load() == 0) sched_yield();
  WaitAsleep(g_tids[1].load());
  pthread_mutex_lock(shared);
  fflush(stdout);
  int ready[2];
  if (pipe(ready) != 0) return 1;
  const pid_t child = fork();
  if (child == 0) {
    const char byte = 1;
    if (write(ready[1], &byte, 1) != 1) _exit(1);  // from here on it sleeps only in the lock
    pthread_mutex_lock(shared);  // waits for the parent
    pthread_mutex_unlock(shared);
    // The child's own contention, on a lock of its own.
    pthread_mutex_t mine = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&mine);
    pthread_mutex_unlock(&mine);
    _exit(0);
  }
  char byte = 0;
  if (read(ready[0], &byte, 1) != 1) return 1;
  WaitAsleep(child, child);
  Burn(kHoldNs);
  pthread_mutex_unlock(shared);
  int status = 0;
  waitpid(child, &status, 0);
  pthread_mutex_unlock(&g_lock);
  pthread_join(t, nullptr);
  printf("result child_status %d\n", status);
  return 0;
}

// --- many short threads: the agent's own locks (thread registry) stay out of the profile ---
void* Short(void*) {
  pthread_mutex_lock(&g_lock);
  pthread_mutex_unlock(&g_lock);
  return nullptr;
}

int Threads() {
  for (int round = 0; round < 50; ++round) {
    pthread_t threads[8];
    for (pthread_t& t : threads) pthread_create(&t, nullptr, Short, nullptr);
    for (pthread_t& t : threads) pthread_join(t, nullptr);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  g_tids[0].store(Tid());
  const char* mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "holder") == 0) return Holder(2);
  if (strcmp(mode, "single") == 0) return Holder(0);
  if (strcmp(mode, "trylock") == 0) return Trylock();
  if (strcmp(mode, "timedlock") == 0) return Timedlock();
  if (strcmp(mode, "recursive") == 0) return Recursive();
  if (strcmp(mode, "rwlock") == 0) return Rwlock();
  if (strcmp(mode, "spin") == 0) return Spin();
  if (strcmp(mode, "cond") == 0) return Cond();
  if (strcmp(mode, "signal") == 0) return SignalLock();
  if (strcmp(mode, "unheld") == 0) return UnlockUnheld();
  if (strcmp(mode, "many") == 0) return Many();
  if (strcmp(mode, "fork") == 0) return ForkShared();
  if (strcmp(mode, "reuse") == 0) return Reuse();
  if (strcmp(mode, "acquire") == 0) return Acquire();
  if (strcmp(mode, "threads") == 0) return Threads();
  fprintf(stderr, "usage: %s holder|single|trylock|timedlock|recursive|rwlock|spin|cond|signal|unheld|many|fork|reuse|acquire|threads\n",
          argv[0]);
  return 2;
}
