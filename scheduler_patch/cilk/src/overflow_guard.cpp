// Fiber stack overflow: a SIGSEGV handler, on an alternate signal stack, that
// recognises a fault in the guard region below the running fiber's stack, writes a
// message naming CILK_STACK_SIZE with write(2) and aborts. Any other SIGSEGV goes
// to the handler that was installed before ours (or the default action).
// Async-signal-safe: reads only the faulting thread's own worker record.
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>

#include "runtime.hpp"

namespace cilk::rt {
namespace {

struct sigaction g_previous_segv;
std::size_t g_guard_size = 0;
std::size_t g_stack_size = 0;
constexpr std::size_t kAltStackSize = 64 * 1024;

void WriteAll(const char* text, std::size_t length) {
  while (length > 0) {
    const ssize_t written = write(STDERR_FILENO, text, length);
    if (written <= 0) return;
    text += written;
    length -= static_cast<std::size_t>(written);
  }
}

void WriteString(const char* text) { WriteAll(text, strlen(text)); }

void WriteNumber(std::size_t value) {
  char digits[32];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0 && n < 32);
  char out[32];
  for (int i = 0; i < n; ++i) out[i] = digits[n - 1 - i];
  WriteAll(out, static_cast<std::size_t>(n));
}

bool InGuard(const cilkprof_segment_t* segment, uintptr_t address) {
  return segment != nullptr && segment->stack_lo != 0 && address < segment->stack_lo &&
         address >= segment->stack_lo - g_guard_size;
}

void ChainToPrevious(int signal, siginfo_t* info, void* context) {
  const struct sigaction& previous = g_previous_segv;
  if ((previous.sa_flags & SA_SIGINFO) != 0 && previous.sa_sigaction != nullptr) {
    previous.sa_sigaction(signal, info, context);
    return;
  }
  if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN && previous.sa_handler != nullptr) {
    previous.sa_handler(signal);
    return;
  }
  // Default action: reinstall it and return; the faulting instruction runs again
  // and the kernel ends the process with the usual SIGSEGV.
  struct sigaction fallback;
  memset(&fallback, 0, sizeof(fallback));
  fallback.sa_handler = SIG_DFL;
  sigaction(SIGSEGV, &fallback, nullptr);
}

void OnSegv(int signal, siginfo_t* info, void* context) {
  const uintptr_t address = reinterpret_cast<uintptr_t>(info->si_addr);
  Worker* worker = tls_worker;
  if (worker != nullptr) {
    const cilkprof_segment_t* running = worker->record.segment;
    const cilkprof_segment_t* scheduler =
        worker->sched_fiber != nullptr ? &worker->sched_fiber->stack.segment : nullptr;
    if (InGuard(running, address) || InGuard(scheduler, address)) {
      WriteString("cilk: stack overflow in a fiber: a spawned function used more than its ");
      WriteNumber(g_stack_size);
      WriteString(
          "-byte stack. Raise CILK_STACK_SIZE (for example CILK_STACK_SIZE=16M) or reduce the "
          "recursion depth inside spawned functions.\n");
      // abort() would run SIGABRT handlers; the stack is gone, so go straight down.
      signal = SIGABRT;
      struct sigaction fallback;
      memset(&fallback, 0, sizeof(fallback));
      fallback.sa_handler = SIG_DFL;
      sigaction(SIGABRT, &fallback, nullptr);
      raise(SIGABRT);
      _exit(134);
    }
  }
  ChainToPrevious(signal, info, context);
}

}  // namespace

void InstallOverflowHandler(const Runtime& runtime) {
  g_guard_size = runtime.stacks.guard_size();
  g_stack_size = runtime.stacks.usable_size();
  struct sigaction action;
  memset(&action, 0, sizeof(action));
  action.sa_sigaction = OnSegv;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  sigaction(SIGSEGV, &action, &g_previous_segv);
}

void EnsureAltSignalStack() {
  stack_t current;
  if (sigaltstack(nullptr, &current) == 0 && (current.ss_flags & SS_DISABLE) == 0) return;  // the thread has one
  void* memory = mmap(nullptr, kAltStackSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) return;  // overflow would then be reported as a plain SIGSEGV
  stack_t alt;
  alt.ss_sp = memory;
  alt.ss_size = kAltStackSize;
  alt.ss_flags = 0;
  if (sigaltstack(&alt, nullptr) != 0) munmap(memory, kAltStackSize);
}

}  // namespace cilk::rt
