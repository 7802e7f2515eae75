#include "inject/thread_stopper.h"

#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "inject/remote_call.h"
#include "inject/target_process.h"

namespace cilkprof::cli::inject {
namespace {

// A thread that does not stop in this time is in uninterruptible sleep (state D).
constexpr std::chrono::seconds kStopTimeout{2};
constexpr int kMaxScans = 100;

}  // namespace

Status ThreadStopper::Seize(pid_t tid) {
  if (::ptrace(PTRACE_SEIZE, tid, nullptr, nullptr) != 0) {
    if (errno == ESRCH) return Status::Ok();  // the thread exited since the scan
    if (errno == EPERM) {
      Result<ProcessStatus> status = ReadProcessStatus(pid_);
      if (status.ok() && status->tracer_pid != 0) {
        return Status::Error("process " + std::to_string(pid_) + " is already traced by process " +
                             DescribeProcess(status->tracer_pid) +
                             " (a debugger or strace?): detach it first, then try again");
      }
    }
    return Status::Error("ptrace(PTRACE_SEIZE) of process " + std::to_string(pid_) + " was refused: " +
                         std::strerror(errno) +
                         " (a security module, a container's seccomp profile, or missing CAP_SYS_PTRACE)");
  }
  ++threads_seen_;
  Held held;
  held.tid = tid;
  held_.push_back(held);
  return Status::Ok();
}

Status ThreadStopper::WaitForStops() {
  for (size_t i = 0; i < held_.size();) {
    Held& held = held_[i];
    if (held.stopped) {
      ++i;
      continue;
    }
    WaitResult waited = WaitForThread(held.tid, kStopTimeout);
    if (waited.kind == WaitResult::kExited) {
      // A thread that exited (or the whole process: then the next scan finds no task).
      held_.erase(held_.begin() + static_cast<long>(i));
      continue;
    }
    if (waited.kind == WaitResult::kTimedOut) {
      return Status::Error("thread " + std::to_string(held.tid) + " of process " + std::to_string(pid_) +
                           " did not stop within " + std::to_string(kStopTimeout.count()) +
                           " s (uninterruptible sleep, state D?); nothing was changed, try again later");
    }
    if (waited.kind != WaitResult::kStopped) {
      return Status::Error("cannot wait for thread " + std::to_string(held.tid) + ": " + std::strerror(errno));
    }
    held.stopped = true;
    // An event stop (our interrupt, or a group stop) carries no signal; any other stop is
    // a signal on its way to the thread, which it must still get.
    if ((waited.status >> 16) == 0) held.pending_signal = WSTOPSIG(waited.status);
    if (::ptrace(PTRACE_GETREGS, held.tid, nullptr, &held.regs) != 0) {
      return Status::Error("cannot read the registers of thread " + std::to_string(held.tid) + ": " +
                           std::strerror(errno));
    }
    ++i;
  }
  return Status::Ok();
}

Status ThreadStopper::StopAll() {
  for (int scan = 0; scan < kMaxScans; ++scan) {
    bool changed = false;
    const std::vector<pid_t> tids = ListThreads(pid_);
    if (tids.empty()) {
      return Status::Error("process " + std::to_string(pid_) + " exited during injection");
    }
    for (pid_t tid : tids) {
      auto known = std::find_if(held_.begin(), held_.end(), [&](const Held& h) { return h.tid == tid; });
      if (known != held_.end()) continue;
      CILKPROF_RETURN_IF_ERROR(Seize(tid));
      changed = true;
    }
    for (Held& held : held_) {
      if (held.stopped) continue;
      held.stopped_since = Clock::now();
      ::ptrace(PTRACE_INTERRUPT, held.tid, nullptr, nullptr);  // ESRCH: the wait says it exited
      changed = true;
    }
    CILKPROF_RETURN_IF_ERROR(WaitForStops());
    if (!changed) {
      if (held_.empty()) return Status::Error("process " + std::to_string(pid_) + " exited during injection");
      return Status::Ok();
    }
  }
  return Status::Error("process " + std::to_string(pid_) + " kept creating threads faster than they could be stopped; try again");
}

void ThreadStopper::EndStop(Held& held) {
  if (!held.stopped) return;
  held.stopped = false;
  auto stopped_for = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - held.stopped_since);
  longest_stop_ = std::max(longest_stop_, stopped_for);
}

Status ThreadStopper::ResumeAll() {
  for (Held& held : held_) {
    if (!held.stopped) continue;
    int signal = held.pending_signal;
    held.pending_signal = 0;
    EndStop(held);
    if (::ptrace(PTRACE_CONT, held.tid, nullptr, reinterpret_cast<void*>(static_cast<uintptr_t>(signal))) != 0 &&
        errno != ESRCH) {
      return Status::Error("cannot resume thread " + std::to_string(held.tid) + ": " + std::strerror(errno));
    }
  }
  return Status::Ok();
}

void ThreadStopper::Release(pid_t tid) {
  auto it = std::find_if(held_.begin(), held_.end(), [&](const Held& h) { return h.tid == tid; });
  if (it == held_.end()) return;
  if (!it->stopped) {
    // PTRACE_DETACH needs a stopped tracee: stop it first (it was running our call or
    // resumed for another round).
    ::ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr);
    WaitResult waited = WaitForThread(tid, kStopTimeout);
    if (waited.kind == WaitResult::kStopped && (waited.status >> 16) == 0) it->pending_signal = WSTOPSIG(waited.status);
    it->stopped = waited.kind == WaitResult::kStopped;
  }
  // ESRCH here means the thread is gone: nothing left to detach.
  ::ptrace(PTRACE_DETACH, tid, nullptr, reinterpret_cast<void*>(static_cast<uintptr_t>(it->pending_signal)));
  EndStop(*it);
  held_.erase(it);
}

void ThreadStopper::ReleaseAll() {
  while (!held_.empty()) Release(held_.front().tid);
}

}  // namespace cilkprof::cli::inject
