#include "inject/remote_call.h"

#include <elf.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>

namespace cilkprof::cli::inject {
namespace {

using Clock = std::chrono::steady_clock;

// Room below the interrupted stack pointer left untouched: the 128-byte red zone the
// ABI grants leaf functions, and some margin.
constexpr std::uint64_t kStackGap = 256;
// Enough for any XSAVE layout the kernel reports (AMX tiles included).
constexpr std::size_t kMaxXstateSize = 64 * 1024;
constexpr std::uint64_t kEflagsTrap = 1u << 8;
constexpr std::uint64_t kEflagsDirection = 1u << 10;

std::string SignalName(int signal) {
  const char* abbrev = ::sigabbrev_np(signal);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(signal);
}

std::string Hex(std::uint64_t value) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%" PRIx64, value);
  return text;
}

}  // namespace

WaitResult WaitForThread(pid_t tid, std::chrono::milliseconds timeout) {
  const Clock::time_point deadline = Clock::now() + timeout;
  // Polled, since a blocking waitpid cannot time out; the pause grows from 20 us so a
  // quick stop is seen quickly and a long call costs little CPU.
  long pause_ns = 20'000;
  for (;;) {
    int status = 0;
    pid_t waited = ::waitpid(tid, &status, WNOHANG | __WALL);
    if (waited == tid) {
      if (WIFSTOPPED(status)) return {WaitResult::kStopped, status};
      return {WaitResult::kExited, status};
    }
    if (waited < 0) {
      if (errno == EINTR) continue;
      // ECHILD: the thread is gone and was reaped by the kernel (a non-leader thread).
      return {errno == ECHILD ? WaitResult::kExited : WaitResult::kError, 0};
    }
    if (Clock::now() >= deadline) return {WaitResult::kTimedOut, 0};
    timespec pause{0, pause_ns};
    ::nanosleep(&pause, nullptr);
    pause_ns = std::min(pause_ns * 2, 1'000'000L);
  }
}

std::string DescribeExit(pid_t pid, int wait_status) {
  std::string text = "process " + std::to_string(pid);
  if (WIFEXITED(wait_status)) {
    return text + " exited during injection (exit status " + std::to_string(WEXITSTATUS(wait_status)) + ")";
  }
  if (WIFSIGNALED(wait_status)) {
    return text + " was killed by " + SignalName(WTERMSIG(wait_status)) + " during injection";
  }
  return text + " exited during injection";
}

Status ReadMemory(pid_t tid, std::uint64_t address, void* out, std::size_t size) {
  iovec local{out, size};
  iovec remote{reinterpret_cast<void*>(address), size};
  if (::process_vm_readv(tid, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(size)) return Status::Ok();
  // process_vm_readv may be unavailable (old kernels, some sandboxes): word by word.
  auto* bytes = static_cast<std::uint8_t*>(out);
  for (std::size_t done = 0; done < size;) {
    errno = 0;
    long word = ::ptrace(PTRACE_PEEKDATA, tid, address + done, nullptr);
    if (errno != 0) {
      return Status::Error("cannot read the target's memory at " + Hex(address + done) + ": " + std::strerror(errno));
    }
    std::size_t chunk = std::min(size - done, sizeof word);
    std::memcpy(bytes + done, &word, chunk);
    done += chunk;
  }
  return Status::Ok();
}

Status WriteMemory(pid_t tid, std::uint64_t address, const void* data, std::size_t size) {
  const auto* bytes = static_cast<const std::uint8_t*>(data);
  for (std::size_t done = 0; done < size;) {
    long word = 0;
    std::size_t chunk = std::min(size - done, sizeof word);
    if (chunk < sizeof word) {  // keep the bytes after the end as they are
      CILKPROF_RETURN_IF_ERROR(ReadMemory(tid, address + done, &word, sizeof word));
    }
    std::memcpy(&word, bytes + done, chunk);
    if (::ptrace(PTRACE_POKEDATA, tid, address + done, word) != 0) {
      return Status::Error("cannot write the target's memory at " + Hex(address + done) + ": " + std::strerror(errno));
    }
    done += chunk;
  }
  return Status::Ok();
}

Result<std::string> ReadCString(pid_t tid, std::uint64_t address, std::size_t max_size) {
  std::string text;
  char chunk[64];
  while (text.size() < max_size) {
    // Never read across a page boundary in one go: the next page may be unmapped.
    std::size_t to_page_end = 4096 - ((address + text.size()) & 4095);
    std::size_t size = std::min({sizeof chunk, to_page_end, max_size - text.size()});
    CILKPROF_RETURN_IF_ERROR(ReadMemory(tid, address + text.size(), chunk, size));
    const void* nul = std::memchr(chunk, '\0', size);
    if (nul) return text + std::string(chunk, static_cast<const char*>(nul) - chunk);
    text.append(chunk, size);
  }
  return text;
}

Result<ThreadState> SaveThreadState(pid_t tid) {
  ThreadState state;
  if (::ptrace(PTRACE_GETREGS, tid, nullptr, &state.regs) != 0) {
    return Status::Error("cannot read the registers of thread " + std::to_string(tid) + ": " + std::strerror(errno));
  }
  if (::ptrace(PTRACE_GETSIGMASK, tid, reinterpret_cast<void*>(sizeof state.signal_mask), &state.signal_mask) != 0) {
    return Status::Error("cannot read the signal mask of thread " + std::to_string(tid) + ": " + std::strerror(errno));
  }
  state.fp_state.resize(kMaxXstateSize);
  iovec io{state.fp_state.data(), state.fp_state.size()};
  state.fp_note = NT_X86_XSTATE;
  if (::ptrace(PTRACE_GETREGSET, tid, reinterpret_cast<void*>(static_cast<uintptr_t>(NT_X86_XSTATE)), &io) != 0) {
    // No XSAVE: the FXSAVE area holds x87 and SSE, all there is.
    state.fp_note = NT_PRFPREG;
    io = {state.fp_state.data(), sizeof(user_fpregs_struct)};
    if (::ptrace(PTRACE_GETREGSET, tid, reinterpret_cast<void*>(static_cast<uintptr_t>(NT_PRFPREG)), &io) != 0) {
      return Status::Error("cannot read the FP registers of thread " + std::to_string(tid) + ": " + std::strerror(errno));
    }
  }
  state.fp_state.resize(io.iov_len);
  return state;
}

Status RestoreThreadState(pid_t tid, const ThreadState& state) {
  std::uint64_t mask = state.signal_mask;
  if (::ptrace(PTRACE_SETSIGMASK, tid, reinterpret_cast<void*>(sizeof mask), &mask) != 0) {
    return Status::Error("cannot restore the signal mask of thread " + std::to_string(tid) + ": " + std::strerror(errno));
  }
  std::vector<std::uint8_t> fp = state.fp_state;  // SETREGSET takes a non-const buffer
  iovec io{fp.data(), fp.size()};
  if (::ptrace(PTRACE_SETREGSET, tid, reinterpret_cast<void*>(static_cast<uintptr_t>(state.fp_note)), &io) != 0) {
    return Status::Error("cannot restore the FP registers of thread " + std::to_string(tid) + ": " + std::strerror(errno));
  }
  user_regs_struct regs = state.regs;
  if (::ptrace(PTRACE_SETREGS, tid, nullptr, &regs) != 0) {
    return Status::Error("cannot restore the registers of thread " + std::to_string(tid) + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

RemoteCaller::RemoteCaller(pid_t pid, pid_t tid, const ThreadState& saved)
    : pid_(pid), tid_(tid), saved_(saved), stack_top_(saved.regs.rsp - kStackGap) {}

void RemoteCaller::UseThreadStack() { stack_top_ = saved_.regs.rsp - kStackGap; }

Result<std::uint64_t> RemoteCaller::Call(std::uint64_t function, std::initializer_list<std::uint64_t> args,
                                         std::chrono::milliseconds timeout, const std::string& what) {
  std::uint64_t mask = saved_.signal_mask & ~(std::uint64_t{1} << (SIGSEGV - 1));
  if (::ptrace(PTRACE_SETSIGMASK, tid_, reinterpret_cast<void*>(sizeof mask), &mask) != 0) {
    return Status::Error("cannot set the signal mask of thread " + std::to_string(tid_) + ": " + std::strerror(errno));
  }
  user_regs_struct regs = saved_.regs;
  unsigned long long* const arg_registers[] = {&regs.rdi, &regs.rsi, &regs.rdx, &regs.rcx, &regs.r8, &regs.r9};
  std::size_t index = 0;
  for (std::uint64_t arg : args) *arg_registers[index++] = arg;
  // At the function's first instruction rsp + 8 is 16-byte aligned, as after a call.
  regs.rsp = (stack_top_ & ~std::uint64_t{15}) - 8;
  const std::uint64_t return_address = 0;
  CILKPROF_RETURN_IF_ERROR(WriteMemory(tid_, regs.rsp, &return_address, sizeof return_address));
  regs.rip = function;
  regs.rax = 0;  // no vector registers used by a variadic call
  // -1: not in a system call, so resuming does not "restart" one at our rip.
  regs.orig_rax = static_cast<std::uint64_t>(-1);
  regs.eflags &= ~(kEflagsTrap | kEflagsDirection);  // the ABI wants DF clear at a call
  if (::ptrace(PTRACE_SETREGS, tid_, nullptr, &regs) != 0) {
    return Status::Error("cannot set the registers of thread " + std::to_string(tid_) + ": " + std::strerror(errno));
  }
  int deliver = 0;
  const Clock::time_point deadline = Clock::now() + timeout;
  for (;;) {
    if (::ptrace(PTRACE_CONT, tid_, nullptr, reinterpret_cast<void*>(static_cast<uintptr_t>(deliver))) != 0) {
      thread_gone_ = errno == ESRCH;
      return Status::Error("cannot resume thread " + std::to_string(tid_) + " for " + what + ": " + std::strerror(errno));
    }
    deliver = 0;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    WaitResult waited = WaitForThread(tid_, std::max(left, std::chrono::milliseconds(0)));
    if (waited.kind == WaitResult::kExited) {
      thread_gone_ = true;
      return Status::Error(DescribeExit(pid_, waited.status));
    }
    if (waited.kind == WaitResult::kTimedOut) {
      // Stop it where it is so the caller can restore the thread; a loader lock the
      // call may hold stays held (see docs/INJECTION.md).
      ::ptrace(PTRACE_INTERRUPT, tid_, nullptr, nullptr);
      WaitResult stopped = WaitForThread(tid_, std::chrono::seconds(2));
      thread_gone_ = stopped.kind != WaitResult::kStopped;
      return Status::Error(what + " did not return within " + std::to_string(timeout.count() / 1000) +
                           " s in process " + std::to_string(pid_) +
                           " (a deadlock in the target's dynamic loader?); the call was abandoned and the "
                           "thread's registers restored, but locks it took may stay held");
    }
    if (waited.kind != WaitResult::kStopped) {
      return Status::Error("cannot wait for thread " + std::to_string(tid_) + ": " + std::strerror(errno));
    }
    const int signal = WSTOPSIG(waited.status);
    const int event = waited.status >> 16;
    if (event != 0) continue;  // an interrupt or group stop: resume
    const bool fault = signal == SIGSEGV || signal == SIGBUS || signal == SIGILL || signal == SIGFPE ||
                       signal == SIGTRAP;
    if (!fault) {
      deliver = signal;  // the program's own signal: it gets it, as during any call
      continue;
    }
    user_regs_struct after{};
    if (::ptrace(PTRACE_GETREGS, tid_, nullptr, &after) != 0) {
      thread_gone_ = errno == ESRCH;
      return Status::Error("cannot read the registers of thread " + std::to_string(tid_) + ": " + std::strerror(errno));
    }
    if (signal == SIGSEGV && after.rip == 0) return after.rax;  // returned to our address 0
    // A crash inside the call: not delivered, the caller restores the thread.
    return Status::Error(what + " crashed with " + SignalName(signal) + " at " + Hex(after.rip) +
                         " in process " + std::to_string(pid_) + "; the signal was not delivered and the thread restored");
  }
}

}  // namespace cilkprof::cli::inject
