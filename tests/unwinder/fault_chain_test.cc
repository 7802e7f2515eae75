// The fault guard forwards faults that happen outside Unwind() to the program exactly
// as the kernel would: to a handler installed before Initialize() or registered later
// through SetChainedFaultHandler(), with the same arguments and signal mask; to the
// default action (death by the same signal); or, for a sent signal, to SIG_IGN.
// Each scenario runs in a forked child; the parent checks how the child ended.
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "cilkprof/unwinder/fault_guard.h"
#include "cilkprof/unwinder/unwinder.h"

namespace cilkprof::unwinder {
namespace {

struct ChildEnd {
  bool exited = false;
  int code = -1;
  bool signaled = false;
  int signo = 0;
};

ChildEnd RunInChild(void (*scenario)()) {
  fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    const struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);  // expected crashes leave no core files behind
    scenario();
    _exit(0);
  }
  ChildEnd end;
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return end;
  end.exited = WIFEXITED(status);
  end.code = end.exited ? WEXITSTATUS(status) : -1;
  end.signaled = WIFSIGNALED(status);
  end.signo = end.signaled ? WTERMSIG(status) : 0;
  return end;
}

// ---- Child-side helpers (run after fork, in the child only) ---------------------------

volatile uint8_t* g_page = nullptr;  // PROT_NONE page the scenarios fault on

void InstallPlain(int signo, void (*handler)(int), int flags = 0) {
  struct sigaction action;
  memset(&action, 0, sizeof(action));
  action.sa_handler = handler;
  action.sa_flags = flags;
  sigemptyset(&action.sa_mask);
  if (sigaction(signo, &action, nullptr) != 0) _exit(90);
}

void InitializeOrExit() {
  const char* error = nullptr;
  if (!Initialize(&error)) _exit(91);
  PrepareThread();
}

void MapFaultingPage() {
  void* page = mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) _exit(92);
  g_page = static_cast<volatile uint8_t*>(page);
}

void Fault() {
  g_page[0] = 1;  // SIGSEGV (SEGV_ACCERR)
}

// A real SIGBUS: touching a file mapping beyond the end of its file.
void BusFault() {
  FILE* file = tmpfile();
  if (file == nullptr) _exit(93);
  void* map = mmap(nullptr, 8192, PROT_READ, MAP_SHARED, fileno(file), 0);
  if (map == MAP_FAILED) _exit(94);
  (void)static_cast<volatile uint8_t*>(map)[0];
}

void Exit42(int) { _exit(42); }
void Exit45(int) { _exit(45); }

// ---- Scenarios -------------------------------------------------------------------------

TEST(FaultChain, HandlerInstalledBeforeInitializeRuns) {
  const ChildEnd end = RunInChild([] {
    MapFaultingPage();
    InstallPlain(SIGSEGV, Exit42);
    InitializeOrExit();
    Fault();
    _exit(1);
  });
  EXPECT_TRUE(end.exited);
  EXPECT_EQ(end.code, 42);
}

void CheckArgumentsAndExit(int signo, siginfo_t* info, void* context) {
  const bool same = signo == SIGSEGV && info != nullptr && info->si_signo == SIGSEGV &&
                    info->si_addr == static_cast<const void*>(const_cast<uint8_t*>(g_page)) &&
                    info->si_code == SEGV_ACCERR && context != nullptr;
  _exit(same ? 43 : 2);
}

TEST(FaultChain, HandlerSetLaterReceivesTheKernelsArguments) {
  const ChildEnd end = RunInChild([] {
    MapFaultingPage();
    InitializeOrExit();
    struct sigaction action;
    memset(&action, 0, sizeof(action));
    action.sa_sigaction = CheckArgumentsAndExit;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    SetChainedFaultHandler(SIGSEGV, &action);
    struct sigaction current;
    if (!GetChainedFaultHandler(SIGSEGV, &current) ||
        current.sa_sigaction != CheckArgumentsAndExit)
      _exit(3);
    Fault();
    _exit(1);
  });
  EXPECT_TRUE(end.exited);
  EXPECT_EQ(end.code, 43);
}

void CheckMaskAndExit(int) {
  sigset_t mask;
  pthread_sigmask(SIG_SETMASK, nullptr, &mask);
  _exit(sigismember(&mask, SIGSEGV) == 1 && sigismember(&mask, SIGUSR2) == 1 ? 44 : 4);
}

TEST(FaultChain, HandlerRunsUnderTheMaskTheKernelWouldSet) {
  const ChildEnd end = RunInChild([] {
    MapFaultingPage();
    struct sigaction action;
    memset(&action, 0, sizeof(action));
    action.sa_handler = CheckMaskAndExit;
    sigemptyset(&action.sa_mask);
    sigaddset(&action.sa_mask, SIGUSR2);
    if (sigaction(SIGSEGV, &action, nullptr) != 0) _exit(90);
    InitializeOrExit();
    Fault();
    _exit(1);
  });
  EXPECT_TRUE(end.exited);
  EXPECT_EQ(end.code, 44);
}

void RepairPage(int) { mprotect(const_cast<uint8_t*>(g_page), 4096, PROT_READ | PROT_WRITE); }

TEST(FaultChain, HandlerThatRepairsTheFaultResumesTheProgram) {
  const ChildEnd end = RunInChild([] {
    MapFaultingPage();
    InstallPlain(SIGSEGV, RepairPage);
    InitializeOrExit();
    Fault();
    _exit(g_page[0] == 1 ? 46 : 5);
  });
  EXPECT_TRUE(end.exited);
  EXPECT_EQ(end.code, 46);
}

volatile int* g_shared_runs = nullptr;
void CountRun(int) { *g_shared_runs = *g_shared_runs + 1; }

TEST(FaultChain, ResetHandHandlerRunsOnceThenTheDefaultKills) {
  void* shared = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(shared, MAP_FAILED);
  g_shared_runs = static_cast<volatile int*>(shared);
  *g_shared_runs = 0;
  const ChildEnd end = RunInChild([] {
    MapFaultingPage();
    InstallPlain(SIGSEGV, CountRun, SA_RESETHAND);
    InitializeOrExit();
    Fault();  // handler runs and returns; the retried access meets SIG_DFL
    _exit(1);
  });
  EXPECT_TRUE(end.signaled);
  EXPECT_EQ(end.signo, SIGSEGV);
  EXPECT_EQ(*g_shared_runs, 1);
  munmap(shared, 4096);
}

TEST(FaultChain, DefaultActionKillsWithTheFaultsSignal) {
  const ChildEnd end = RunInChild([] {
    MapFaultingPage();
    InstallPlain(SIGSEGV, SIG_DFL);
    InitializeOrExit();
    Fault();
    _exit(1);
  });
  EXPECT_TRUE(end.signaled);
  EXPECT_EQ(end.signo, SIGSEGV);
}

TEST(FaultChain, BusErrorsAreForwardedToo) {
  ChildEnd end = RunInChild([] {
    InstallPlain(SIGBUS, SIG_DFL);
    InitializeOrExit();
    BusFault();
    _exit(1);
  });
  EXPECT_TRUE(end.signaled);
  EXPECT_EQ(end.signo, SIGBUS);
  end = RunInChild([] {
    InitializeOrExit();
    struct sigaction action;
    memset(&action, 0, sizeof(action));
    action.sa_handler = Exit45;
    sigemptyset(&action.sa_mask);
    SetChainedFaultHandler(SIGBUS, &action);
    BusFault();
    _exit(1);
  });
  EXPECT_TRUE(end.exited);
  EXPECT_EQ(end.code, 45);
}

TEST(FaultChain, IgnoringSegvDoesNotSurviveARealFault) {
  const ChildEnd end = RunInChild([] {
    MapFaultingPage();
    InstallPlain(SIGSEGV, SIG_IGN);
    InitializeOrExit();
    Fault();
    _exit(1);
  });
  EXPECT_TRUE(end.signaled);
  EXPECT_EQ(end.signo, SIGSEGV);
}

TEST(FaultChain, IgnoredSentSegvIsIgnored) {
  const ChildEnd end = RunInChild([] {
    InstallPlain(SIGSEGV, SIG_IGN);
    InitializeOrExit();
    raise(SIGSEGV);
    _exit(47);
  });
  EXPECT_TRUE(end.exited);
  EXPECT_EQ(end.code, 47);
}

TEST(FaultChain, SentSegvWithTheDefaultActionKills) {
  const ChildEnd end = RunInChild([] {
    InstallPlain(SIGSEGV, SIG_DFL);
    InitializeOrExit();
    raise(SIGSEGV);
    _exit(1);
  });
  EXPECT_TRUE(end.signaled);
  EXPECT_EQ(end.signo, SIGSEGV);
}

void ReadFaultingPage(void*) { (void)g_page[0]; }

TEST(FaultChain, FaultsInsideTheGuardNeverReachTheProgram) {
  const ChildEnd end = RunInChild([] {
    MapFaultingPage();
    InstallPlain(SIGSEGV, Exit42);
    InitializeOrExit();
    if (RunGuarded(ReadFaultingPage, nullptr) != GuardOutcome::kFaulted) _exit(6);
    // The program's handler still gets the faults that are its own.
    Fault();
    _exit(1);
  });
  EXPECT_TRUE(end.exited);
  EXPECT_EQ(end.code, 42);
}

// ---- On an alternate signal stack (the agent gives every thread one) ------------------

void GiveAltStackOrExit() {
  constexpr size_t kBytes = 64 << 10;
  void* memory = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) _exit(95);
  stack_t alt;
  alt.ss_sp = memory;
  alt.ss_size = kBytes;
  alt.ss_flags = 0;
  if (sigaltstack(&alt, nullptr) != 0) _exit(96);
}

volatile sig_atomic_t g_guarded_faults = 0;

// Like the agent's sample handler (no SA_ONSTACK): a guarded fault inside it runs the
// guard's handler on the alternate stack, which jumps back to this frame on the
// thread's own stack.
void GuardedFaultInHandler(int) {
  if (RunGuarded(ReadFaultingPage, nullptr) == GuardOutcome::kFaulted) g_guarded_faults = g_guarded_faults + 1;
}

int (*volatile g_recurse_next)(int);
__attribute__((noinline)) int RecurseForever(int depth) {
  volatile char frame[256];
  frame[0] = static_cast<char>(depth);
  return g_recurse_next(depth + 1) + frame[0];
}

void ExitFromHook(int signo, const siginfo_t*) { _exit(signo == SIGSEGV ? 43 : 44); }

void* GuardOnAltStackThread(void*) {
  GiveAltStackOrExit();
  InstallPlain(SIGUSR1, GuardedFaultInHandler);
  for (int i = 0; i < 1000; ++i) raise(SIGUSR1);
  if (g_guarded_faults != 1000) _exit(7);
  stack_t now;
  if (sigaltstack(nullptr, &now) != 0 || (now.ss_flags & SS_ONSTACK) != 0) _exit(8);  // left it
  // The alternate stack still works: a stack overflow reaches the guard (SA_ONSTACK),
  // which calls the default-action hook (the agent's last flush) before dying. Not
  // under AddressSanitizer, which reports stack overflows itself (its own SIGSEGV
  // handler on its own alternate stack) and never lets one reach the guard; the agent
  // never runs under it (it is preloaded into unsanitized programs only).
#if defined(__SANITIZE_ADDRESS__)
  _exit(43);
#endif
  SetDefaultActionHook(ExitFromHook);
  g_recurse_next = RecurseForever;
  RecurseForever(0);
  _exit(9);
}

TEST(FaultChain, GuardedFaultsInAHandlerReturnFromTheAlternateStack) {
  const ChildEnd end = RunInChild([] {
    MapFaultingPage();
    InitializeOrExit();
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 << 10);  // a quick overflow
    pthread_t thread;
    if (pthread_create(&thread, &attr, GuardOnAltStackThread, nullptr) != 0) _exit(97);
    pthread_join(thread, nullptr);
    _exit(1);
  });
  EXPECT_TRUE(end.exited) << "died of signal " << end.signo;
  EXPECT_EQ(end.code, 43);
}

TEST(FaultChain, GuardOwnsNothingBeforeInitialize) {
  // This process never initializes the guard (every scenario above ran in a child).
  EXPECT_FALSE(IsFaultGuardSignal(SIGSEGV));
  struct sigaction action;
  EXPECT_FALSE(GetChainedFaultHandler(SIGSEGV, &action));
}

}  // namespace
}  // namespace cilkprof::unwinder
