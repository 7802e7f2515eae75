// Ptrace primitives on one thread of the target (x86-64): waiting for it with a
// timeout, reading and writing its memory, saving and restoring its registers, and
// calling a function inside it.
//
// All ptrace requests for a tracee must come from the thread that seized it, and no
// other thread of the tracer may waitpid(-1) meanwhile (it could take our stops).
#pragma once

#include <sys/types.h>
#include <sys/user.h>

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "cilkprof/common/status.h"

namespace cilkprof::cli::inject {

// What waitpid said about a thread, within a timeout.
struct WaitResult {
  enum Kind { kStopped, kExited, kTimedOut, kError } kind = kError;
  int status = 0;  // the waitpid status for kStopped and kExited
};
WaitResult WaitForThread(pid_t tid, std::chrono::milliseconds timeout);

// "process 12 exited during injection (exit status 3)" / "... was killed by SIGKILL".
std::string DescribeExit(pid_t pid, int wait_status);

Status ReadMemory(pid_t tid, std::uint64_t address, void* out, std::size_t size);
Status WriteMemory(pid_t tid, std::uint64_t address, const void* data, std::size_t size);
// A NUL-terminated string of at most `max_size` bytes.
Result<std::string> ReadCString(pid_t tid, std::uint64_t address, std::size_t max_size);

// Everything the remote calls change in a thread: the general registers (with
// orig_rax, which decides whether an interrupted system call restarts) and the FP and
// vector state (x87, SSE, AVX and beyond through XSAVE; plain FXSAVE without it).
struct ThreadState {
  user_regs_struct regs{};
  std::uint64_t signal_mask = 0;  // the thread's blocked signals (kernel sigset)
  std::vector<std::uint8_t> fp_state;
  unsigned fp_note = 0;  // NT_X86_XSTATE or NT_PRFPREG
};
Result<ThreadState> SaveThreadState(pid_t tid);
Status RestoreThreadState(pid_t tid, const ThreadState& state);

// Calls functions in a stopped thread: rip = the function, the arguments in rdi, rsi,
// rdx, rcx, r8, r9, a return address of 0 on a 16-byte aligned stack; the return to 0
// faults, and that SIGSEGV (which we never deliver) ends the call. Other signals that
// arrive meanwhile are delivered as they would be to any running code.
// SIGSEGV is unblocked in the thread during the calls: the kernel resets the handler
// of a fault signal that is blocked when it is raised, process-wide, to SIG_DFL.
class RemoteCaller {
 public:
  RemoteCaller(pid_t pid, pid_t tid, const ThreadState& saved);

  // Calls run on [.., top); until set, below the red zone of the thread's own stack.
  void SetStackTop(std::uint64_t top) { stack_top_ = top; }
  // Back to the thread's own stack (to unmap the scratch stack, say).
  void UseThreadStack();

  // The function's rax. On error: thread_gone() says whether the process has exited
  // (nothing left to restore); otherwise the thread is stopped and can be restored.
  Result<std::uint64_t> Call(std::uint64_t function, std::initializer_list<std::uint64_t> args,
                             std::chrono::milliseconds timeout, const std::string& what);
  bool thread_gone() const { return thread_gone_; }

 private:
  pid_t pid_;
  pid_t tid_;
  ThreadState saved_;
  std::uint64_t stack_top_;
  bool thread_gone_ = false;
};

}  // namespace cilkprof::cli::inject
