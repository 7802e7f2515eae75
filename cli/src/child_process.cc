#include "child_process.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace cilkprof::cli {
namespace {

constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP};

std::vector<char*> CStrings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const auto& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// Every descriptor open in this process, sorted.
std::vector<int> OpenFds() {
  std::vector<int> fds;
  if (DIR* dir = ::opendir("/proc/self/fd")) {
    const int own = ::dirfd(dir);
    while (const dirent* entry = ::readdir(dir)) {
      if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
      const int fd = std::atoi(entry->d_name);
      if (fd != own) fds.push_back(fd);
    }
    ::closedir(dir);
  } else {
    // No /proc: probe the usual range.
    for (int fd = 0; fd < 1024; ++fd) {
      if (::fcntl(fd, F_GETFD) >= 0) fds.push_back(fd);
    }
  }
  std::sort(fds.begin(), fds.end());
  return fds;
}

// In the forked child, between fork and exec: async-signal-safe calls only (other
// threads may have held locks at the fork). Reports exec's errno on `error_fd`.
[[noreturn]] void ExecInChild(const char* path, char* const* argv, char* const* env, const ForwardedSignals& signals,
                              const ChildStdio& stdio, const std::vector<int>& ours, int highest_known, int error_fd) {
  if (signals.sigchld_was_ignored()) {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    ::sigaction(SIGCHLD, &ignore, nullptr);
  }
  // Before ours are closed: the replacements are among them.
  const int replacements[3] = {stdio.in, stdio.out, stdio.err};
  for (int target = 0; target < 3; ++target) {
    if (replacements[target] >= 0 && replacements[target] != target) ::dup2(replacements[target], target);
  }
  for (int fd : ours) {
    if (fd > 2 || replacements[fd] < 0) ::close(fd);  // a standard slot we just filled stays
  }
  // Anything another thread opened after we listed the descriptors is above them all
  // unless it reused a gap; the error pipe closes itself at exec.
  ::close_range(static_cast<unsigned>(highest_known) + 1, ~0u, 0);
  ::sigprocmask(SIG_SETMASK, &signals.previous_mask(), nullptr);
  ::execve(path, argv, env);
  const int err = errno;
  ssize_t ignored = ::write(error_fd, &err, sizeof err);
  (void)ignored;
  ::_exit(127);
}

ChildExit DescribeExit(int status) {
  ChildExit exit;
  if (WIFEXITED(status)) {
    exit.exit_code = WEXITSTATUS(status);
    exit.description = "exited with status " + std::to_string(exit.exit_code);
  } else if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    exit.exit_code = 128 + sig;
    exit.signal = sig;
    exit.description = "killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")" +
                       (WCOREDUMP(status) ? ", core dumped" : "");
  }
  return exit;
}

}  // namespace

ForwardedSignals::ForwardedSignals() {
  sigemptyset(&blocked_);
  for (int sig : kForwarded) sigaddset(&blocked_, sig);
  sigaddset(&blocked_, SIGCHLD);
  pthread_sigmask(SIG_BLOCK, &blocked_, &previous_);
  struct sigaction chld {};
  if (::sigaction(SIGCHLD, nullptr, &chld) == 0 && !(chld.sa_flags & SA_SIGINFO) && chld.sa_handler == SIG_IGN) {
    sigchld_was_ignored_ = true;
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    ::sigaction(SIGCHLD, &dfl, nullptr);
  }
}

ForwardedSignals::~ForwardedSignals() {
  // Drop forwarded signals still pending, so they do not hit us after the child is
  // gone (the program already got them); then restore the mask.
  timespec zero{0, 0};
  sigset_t forwarded;
  sigemptyset(&forwarded);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) {
    if (!sigismember(&previous_, sig)) sigaddset(&forwarded, sig);
  }
  while (sigtimedwait(&forwarded, nullptr, &zero) > 0) {
  }
  if (sigchld_was_ignored_) {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    ::sigaction(SIGCHLD, &ignore, nullptr);
  }
  pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
}

InheritedFds InheritedFds::Snapshot() {
  InheritedFds snapshot;
  snapshot.fds_ = OpenFds();
  return snapshot;
}

bool InheritedFds::Contains(int fd) const { return std::binary_search(fds_.begin(), fds_.end(), fd); }

Result<ChildExit> RunChild(const std::string& path, const std::vector<std::string>& argv,
                           const std::vector<std::string>& env, const ForwardedSignals& signals,
                           const InheritedFds& inherited, const std::function<void(pid_t)>& on_started,
                           const ChildStdio& stdio) {
  std::vector<char*> c_argv = CStrings(argv);
  std::vector<char*> c_env = CStrings(env);
  int error_pipe[2];
  if (::pipe2(error_pipe, O_CLOEXEC) != 0) {
    return Status::Error(std::string("cannot start the program: pipe: ") + std::strerror(errno));
  }
  // Our own descriptors (the collector's sockets...), closed in the child: listed here
  // because listing them there would allocate.
  std::vector<int> ours;
  int highest_known = error_pipe[1];
  for (int fd : OpenFds()) {
    highest_known = std::max(highest_known, fd);
    if (!inherited.Contains(fd) && fd != error_pipe[1]) ours.push_back(fd);
  }

  const pid_t pid = ::fork();
  if (pid == 0) {
    ExecInChild(path.c_str(), c_argv.data(), c_env.data(), signals, stdio, ours, highest_known, error_pipe[1]);
  }
  const int fork_errno = errno;
  ::close(error_pipe[1]);
  if (pid < 0) {
    ::close(error_pipe[0]);
    return Status::Error("cannot start '" + path + "': " + std::strerror(fork_errno));
  }
  if (on_started) on_started(pid);
  int exec_errno = 0;
  ssize_t got;
  do {
    got = ::read(error_pipe[0], &exec_errno, sizeof exec_errno);
  } while (got < 0 && errno == EINTR);
  ::close(error_pipe[0]);
  if (got == static_cast<ssize_t>(sizeof exec_errno)) {  // exec failed; the child exited
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return Status::Error("cannot start '" + path + "': " + std::strerror(exec_errno));
  }

  for (;;) {
    int status = 0;
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) return DescribeExit(status);
    if (done < 0 && errno != EINTR) {
      return Status::Error(std::string("waiting for the program failed: ") + std::strerror(errno));
    }
    siginfo_t info{};
    // A timeout guards against a SIGCHLD consumed elsewhere; normally SIGCHLD wakes us.
    timespec tick{1, 0};
    const int sig = sigtimedwait(&signals.blocked(), &info, &tick);
    if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
      const bool from_process = info.si_code == SI_USER || info.si_code == SI_QUEUE || info.si_code == SI_TKILL;
      if (from_process && info.si_pid != pid) ::kill(pid, sig);
    }
  }
}

}  // namespace cilkprof::cli
