#include "child_process.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cilkprof::cli {
namespace {

std::vector<char*> CStrings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const auto& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

}  // namespace

ForwardedSignals::ForwardedSignals() {
  sigemptyset(&blocked_);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) sigaddset(&blocked_, sig);
  pthread_sigmask(SIG_BLOCK, &blocked_, &previous_);
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
  pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
}

Result<ChildExit> RunChild(const std::string& path, const std::vector<std::string>& argv,
                           const std::vector<std::string>& env, const ForwardedSignals& signals) {
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) sigaddset(&defaults, sig);
  posix_spawnattr_setsigmask(&attr, &signals.previous_mask());
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::vector<char*> c_argv = CStrings(argv);
  std::vector<char*> c_env = CStrings(env);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, path.c_str(), nullptr, &attr, c_argv.data(), c_env.data());
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    return Status::Error("cannot start '" + path + "': " + std::strerror(rc));
  }

  for (;;) {
    int status = 0;
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) {
      ChildExit exit;
      if (WIFEXITED(status)) {
        exit.exit_code = WEXITSTATUS(status);
        exit.description = "exited with status " + std::to_string(exit.exit_code);
      } else if (WIFSIGNALED(status)) {
        const int sig = WTERMSIG(status);
        exit.exit_code = 128 + sig;
        exit.description = "killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")" +
                           (WCOREDUMP(status) ? ", core dumped" : "");
      }
      return exit;
    }
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
