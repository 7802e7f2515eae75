// `cilkprof attach PID` and `cilkprof detach PID`: profiling a running process through
// its standby agent's control socket, after loading the agent with ptrace when the
// process has none (docs/USER_GUIDE.md, "Profiling a running service").
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>

#include "agent_locator.h"
#include "attach/control_client.h"
#include "cilkprof/aggregator/server.h"
#include "cilkprof/common/control_protocol.h"
#include "commands.h"
#include "duration.h"
#include "inject/injector.h"
#include "output_naming.h"
#include "private_dir.h"
#include "progress.h"
#include "run_summary.h"
#include "stderr_logging.h"

namespace cilkprof::cli {
namespace {

using Clock = std::chrono::steady_clock;

// How long the agent may take to answer a request; a detach includes sending the
// window's last data (the agent's own bound is 5 s).
constexpr std::chrono::milliseconds kReplyTimeout{10000};
constexpr std::chrono::milliseconds kDetachTimeout{15000};
constexpr std::chrono::milliseconds kDrain{3000};

// Whether `pid` still runs. Not kill(pid, 0): a killed process stays a zombie until its
// parent reaps it, and that answers as alive right when the agent's end is noticed.
bool StillRuns(pid_t pid) {
  char state = 0;
  FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "r");
  if (f == nullptr) return false;
  // "pid (comm) S ...": the state follows the last ')' (comm may hold anything).
  char line[1024];
  const size_t n = std::fread(line, 1, sizeof line - 1, f);
  std::fclose(f);
  line[n] = '\0';
  if (const char* close = std::strrchr(line, ')'); close != nullptr && close[1] == ' ') state = close[2];
  return state != 0 && state != 'Z' && state != 'X';
}

std::string Executable(pid_t pid) {
  char buf[4096];
  const ssize_t n = readlink(("/proc/" + std::to_string(pid) + "/exe").c_str(), buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

Result<int> ConnectUnix(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) return Status::Error("the socket path " + path + " is too long");
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::Error(std::string("socket: ") + std::strerror(errno));
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    const int error = errno;
    close(fd);
    return Status::Error(std::strerror(error));
  }
  return fd;
}

// The process's control socket, loading the agent first when it has none.
Result<attach::ControlConnection> ReachAgent(pid_t pid, const std::string& agent, bool quiet) {
  auto path = attach::ControlSocketOf(pid);
  if (!path.ok()) return path.status();
  if (!inject::AgentLoaded(pid, agent)) {
    if (Status check = inject::CheckInjectable(pid, agent); !check.ok()) return check;
    inject::InjectionReport report;
    if (Status loaded = inject::InjectAgent(pid, agent, &report); !loaded.ok()) return loaded;
    if (!quiet) {
      std::fprintf(stderr, "cilkprof: loaded the agent into process %d (%d threads, stopped for at most %.1f ms)\n",
                   static_cast<int>(pid), report.threads, static_cast<double>(report.longest_stop.count()) / 1000.0);
    }
  }
  auto connection = attach::ControlConnection::Open(*path, pid);
  if (!connection.ok()) {
    return Status::Error("process " + std::to_string(pid) +
                         " has the agent loaded but no standby agent answers (" + connection.status().message() +
                         "): it is profiled by `cilkprof run` already, was started with the agent preloaded "
                         "but without CILKPROF_STANDBY=1 (restart it with `cilkprof run --standby`), or an earlier "
                         "injection loaded the agent but could not start it (its message said why)");
  }
  return connection;
}

// Reads the ATTACH reply: OK, or the error to print.
Status ExpectOk(attach::ControlConnection& control, pid_t pid) {
  auto reply = control.ReadLine(kReplyTimeout);
  if (!reply.ok()) return Status::Error("process " + std::to_string(pid) + ": " + reply.status().message());
  const std::string verb = control::Verb(*reply);
  if (verb == "OK") return Status::Ok();
  if (verb == "BUSY") return Status::Error("process " + std::to_string(pid) + " is " + control::Rest(*reply));
  return Status::Error("process " + std::to_string(pid) + " refused the attach: " + control::Rest(*reply));
}

control::AttachRequest RequestOf(const AttachArgs& args, uint64_t period_ns) {
  control::AttachRequest r;
  r.clock = args.clock;
  r.period_ns = period_ns;
  r.unwind = args.unwind;
  r.workspan = !args.no_workspan;
  r.timeline = args.timeline;
  r.persistent = !args.daemon.empty();
  return r;
}

Result<uint64_t> PeriodOf(const AttachArgs& args) {
  if (!args.period.empty()) return ParsePeriod(args.period);
  if (args.frequency_hz) return PeriodFromFrequency(*args.frequency_hz);
  return uint64_t{1'000'000};
}

// Blocks the signals that end an attach early, before the collector starts its threads
// (they inherit the mask), and hands them out through a signalfd.
class StopSignals {
 public:
  StopSignals() {
    sigemptyset(&set_);
    for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&set_, s);
    pthread_sigmask(SIG_BLOCK, &set_, &previous_);
    fd_ = signalfd(-1, &set_, SFD_CLOEXEC);
  }
  ~StopSignals() {
    if (fd_ >= 0) close(fd_);
    pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
  }
  int fd() const { return fd_; }
  int Take() {
    signalfd_siginfo info{};
    return read(fd_, &info, sizeof info) == sizeof info ? static_cast<int>(info.ssi_signo) : 0;
  }

 private:
  sigset_t set_, previous_;
  int fd_ = -1;
};

enum class WindowEnd { kDuration, kSignal, kAgentEnded };

// Waits for the duration (0: none), a stop signal or the agent's end of the attach.
WindowEnd WaitWindow(const attach::ControlConnection& control, StopSignals& stop, uint64_t duration_ns, int* signal) {
  const auto end = Clock::now() + std::chrono::nanoseconds(duration_ns);
  for (;;) {
    int timeout = -1;
    if (duration_ns != 0) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now()).count();
      if (left <= 0) return WindowEnd::kDuration;
      timeout = static_cast<int>(std::min<int64_t>(left + 1, 1 << 30));
    }
    pollfd fds[2] = {{stop.fd(), POLLIN, 0}, {control.fd(), POLLIN, 0}};
    if (poll(fds, 2, timeout) < 0 && errno != EINTR) return WindowEnd::kAgentEnded;
    if (fds[0].revents & POLLIN) {
      *signal = stop.Take();
      return WindowEnd::kSignal;
    }
    // The agent says something only to end the attach (the connection to us was lost),
    // and its end means the process is gone.
    if (fds[1].revents != 0) return WindowEnd::kAgentEnded;
  }
}

std::string Seconds(Clock::duration d) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", std::chrono::duration<double>(d).count());
  return text;
}

int AttachToDaemon(const AttachArgs& args, attach::ControlConnection& control, uint64_t period_ns) {
  auto daemon = ConnectUnix(args.daemon);
  if (!daemon.ok()) {
    PrintError("cannot connect to cilkprofd at " + args.daemon + " (" + daemon.status().message() +
               "); start it first, e.g. `cilkprofd --socket " + args.daemon + " --window 60s`");
    return kExitFailure;
  }
  const Status sent = control.Send(control::EncodeAttach(RequestOf(args, period_ns)), *daemon);
  close(*daemon);
  if (!sent.ok()) {
    PrintError(sent.message());
    return kExitFailure;
  }
  if (Status ok = ExpectOk(control, args.pid); !ok.ok()) {
    PrintError(ok.message());
    return kExitFailure;
  }
  if (!args.quiet) {
    std::fprintf(stderr,
                 "cilkprof: process %d streams its samples to cilkprofd at %s (one profile per window); "
                 "stop with: cilkprof detach %d\n",
                 static_cast<int>(args.pid), args.daemon.c_str(), static_cast<int>(args.pid));
  }
  return 0;
}

}  // namespace

int RunAttach(const AttachArgs& args) {
  auto period_ns = PeriodOf(args);
  if (!period_ns.ok()) {
    PrintError(period_ns.status().message());
    return kExitUsage;
  }
  uint64_t duration_ns = 0;
  if (!args.duration.empty()) {
    auto parsed = ParseDuration(args.duration);
    if (!parsed.ok()) {
      PrintError("--duration: " + parsed.status().message());
      return kExitUsage;
    }
    duration_ns = *parsed;
  }
  if (args.daemon.empty()) {
    if (const std::string problem = OutputProblem(args.output, args.force); !problem.empty()) {
      PrintError(problem);
      return kExitUsage;
    }
  }
  if (args.pid <= 0 || (::kill(args.pid, 0) != 0 && errno == ESRCH)) {
    PrintError("no process " + std::to_string(args.pid) + " (check the PID with ps)");
    return kExitFailure;
  }
  if (args.pid == ::getpid()) {
    PrintError("cilkprof cannot attach to itself");
    return kExitUsage;
  }
  auto agent = LocateAgent(std::getenv("CILKPROF_AGENT"), ExecutableDir(), CILKPROF_INSTALL_LIBDIR,
                           CILKPROF_INSTALL_RELATIVE_LIBDIR);
  if (!agent.ok()) {
    PrintError(agent.status().message());
    return kExitFailure;
  }
  const std::string executable = Executable(args.pid);

  // Before any thread of ours exists (the collector's, below).
  StopSignals stop;
  auto control = ReachAgent(args.pid, *agent, args.quiet);
  if (!control.ok()) {
    PrintError(control.status().message());
    return kExitFailure;
  }
  if (!args.daemon.empty()) return AttachToDaemon(args, *control, *period_ns);

  RouteLogsToStderr(args.quiet ? spdlog::level::critical : spdlog::level::warn);
  auto dir = PrivateDir::Create();
  if (!dir.ok()) {
    PrintError(dir.status().message());
    return kExitFailure;
  }
  const std::string socket = dir->path() + "/agents.sock";
  auto naming = std::make_shared<ProfileNaming>(args.output, args.force, ProfileStem(executable));
  naming->ProgramStarted(static_cast<uint32_t>(args.pid));
  aggregator::AggregatorOptions options;
  options.unix_socket_path = socket;
  options.output_path = [naming](const aggregator::ProcessKey& key) { return naming->PathFor(key); };
  options.exec_successor_wait = std::chrono::milliseconds(0);
  auto started = aggregator::Aggregator::Start(std::move(options));
  if (!started.ok()) {
    PrintError("cannot start the profile collector: " + started.status().message());
    return kExitFailure;
  }
  std::unique_ptr<aggregator::Aggregator> collector = std::move(*started);
  collector->SetProgramPid(static_cast<uint32_t>(args.pid));

  // The agent gets a connection we opened (our credentials, checked by the collector):
  // it needs no permission on our private directory.
  auto to_collector = ConnectUnix(socket);
  if (!to_collector.ok()) {
    collector->Finish(std::chrono::milliseconds(0));
    PrintError("cannot connect to the profile collector: " + to_collector.status().message());
    return kExitFailure;
  }
  const Status sent = control->Send(control::EncodeAttach(RequestOf(args, *period_ns)), *to_collector);
  close(*to_collector);
  Status ok = sent.ok() ? ExpectOk(*control, args.pid) : sent;
  if (!ok.ok()) {
    collector->Finish(std::chrono::milliseconds(0));
    PrintError(ok.message());
    return kExitFailure;
  }
  const auto attached_at = Clock::now();
  if (!args.quiet) {
    std::string how_long = duration_ns != 0 ? "for " + Seconds(std::chrono::nanoseconds(duration_ns)) + " (Ctrl-C stops it early)"
                                            : "until Ctrl-C";
    std::fprintf(stderr, "cilkprof: profiling process %d (%s) %s\n", static_cast<int>(args.pid), executable.c_str(),
                 how_long.c_str());
  }

  int signal = 0;
  const WindowEnd end = WaitWindow(*control, stop, duration_ns, &signal);
  const auto elapsed = Clock::now() - attached_at;
  std::string headline;
  if (end == WindowEnd::kAgentEnded) {
    const bool alive = StillRuns(args.pid);
    headline = alive ? "the attach to process " + std::to_string(args.pid) + " ended after " + Seconds(elapsed) +
                           " (the agent lost its connection to cilkprof)"
                     : "process " + std::to_string(args.pid) + " ended after " + Seconds(elapsed) + " of profiling";
  } else {
    bool closed = false;
    Status detach = control->Send("DETACH\n");
    auto reply = detach.ok() ? control->ReadLine(kDetachTimeout, &closed) : Result<std::string>(detach);
    if (reply.ok() && control::Verb(*reply) == "DETACHED") {
      headline = "detached from process " + std::to_string(args.pid) + " after " + Seconds(elapsed);
    } else if (closed || !StillRuns(args.pid)) {
      headline = "process " + std::to_string(args.pid) + " ended after " + Seconds(elapsed) + " of profiling";
    } else {
      headline = "process " + std::to_string(args.pid) + " did not confirm the detach (" +
                 reply.status().message() + ") after " + Seconds(elapsed);
    }
  }

  Progress progress(!args.quiet);
  progress.Stage("collecting the last samples and writing the profile");
  std::vector<aggregator::WrittenProfile> written = collector->Finish(kDrain);
  collector.reset();
  naming->Settle(&written);
  if (written.empty()) {
    progress.Clear();
    PrintError("no profile was written: " + headline);
    return kExitFailure;
  }
  const std::string workspan_note =
      args.no_workspan ? "" : "measured in the attach window for the computations that began in it (samples include the instrumentation's cost)";
  if (!args.quiet) {
    PrintRunSummary(written, headline, *naming, workspan_note, progress);
  } else {
    for (const std::string& problem : WriteProblems(written, *naming, true)) PrintError(problem);
  }
  if (signal == SIGINT || signal == SIGTERM || signal == SIGHUP) DieBySignalOnExit(signal);
  return 0;
}

int RunDetach(const DetachArgs& args) {
  auto path = attach::ControlSocketOf(args.pid);
  if (!path.ok()) {
    PrintError(path.status().message());
    return kExitFailure;
  }
  auto control = attach::ControlConnection::Open(*path, args.pid);
  if (!control.ok()) {
    PrintError("process " + std::to_string(args.pid) + " has no standby agent to detach (" +
               control.status().message() + ")");
    return kExitFailure;
  }
  Status sent = control->Send("DETACH\n");
  auto reply = sent.ok() ? control->ReadLine(kDetachTimeout) : Result<std::string>(sent);
  if (!reply.ok()) {
    PrintError("process " + std::to_string(args.pid) + ": " + reply.status().message());
    return kExitFailure;
  }
  if (control::Verb(*reply) != "DETACHED") {
    PrintError("process " + std::to_string(args.pid) + ": " + control::Rest(*reply));
    return kExitFailure;
  }
  std::fprintf(stderr, "cilkprof: detached from process %d\n", static_cast<int>(args.pid));
  return 0;
}

}  // namespace cilkprof::cli
