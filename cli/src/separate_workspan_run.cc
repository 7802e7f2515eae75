#include "separate_workspan_run.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>

#include "cilkprof/aggregator/profile_io.h"
#include "cilkprof/aggregator/workspan_graft.h"
#include "private_dir.h"

namespace cilkprof::cli {
namespace {

// How long to wait, after the instrumented run ends, for its agents' last messages.
constexpr std::chrono::milliseconds kDrain{3000};
// Lines of the instrumented run's standard error shown when it fails.
constexpr size_t kErrorLinesShown = 5;

// A descriptor closed when it goes out of scope.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

// The last lines of a file, indented, for a message ("" when it is empty).
std::string LastLines(const std::string& path, size_t count) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
    if (lines.size() > count) lines.erase(lines.begin());
  }
  std::string out;
  for (const std::string& line : lines) out += "\n    " + line;
  return out;
}

// The profiles of processes that ran on the Cilk runtime, in order of start.
std::vector<const aggregator::WrittenProfile*> ProcessesOnTheRuntime(
    const std::vector<aggregator::WrittenProfile>& sampled) {
  std::vector<const aggregator::WrittenProfile*> out;
  for (const aggregator::WrittenProfile& profile : sampled) {
    if (profile.recorded_nothing || profile.path.empty() || !profile.status.ok() || profile.runtime.empty()) continue;
    out.push_back(&profile);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const auto* a, const auto* b) { return a->process.sequence < b->process.sequence; });
  return out;
}

// Grafts `instrumented` (a file of the second run) into the sampled profile at `path`.
Status Graft(const std::string& instrumented_path, const std::string& path) {
  auto instrumented = aggregator::ReadProfileFile(instrumented_path);
  if (!instrumented.ok()) return instrumented.status();
  auto sampled = aggregator::ReadProfileFile(path);
  if (!sampled.ok()) return sampled.status();
  if (Status grafted = aggregator::GraftWorkSpan(*instrumented, &*sampled); !grafted.ok()) return grafted;
  return aggregator::WriteProfileFile(path, *sampled);
}

}  // namespace

StdinReplay StdinReplay::Note() {
  StdinReplay out;
  struct stat st {};
  if (::fstat(STDIN_FILENO, &st) != 0) return out;  // closed: nothing to read twice
  if (S_ISREG(st.st_mode)) {
    const off_t offset = ::lseek(STDIN_FILENO, 0, SEEK_CUR);
    if (offset >= 0) {
      out.regular_ = true;
      out.offset_ = offset;
    } else {
      out.why_not_ = "standard input is a file that cannot be read again from the start";
    }
  } else if (S_ISFIFO(st.st_mode)) {
    out.why_not_ = "standard input is a pipe";
  } else if (S_ISSOCK(st.st_mode)) {
    out.why_not_ = "standard input is a socket";
  }
  return out;
}

bool StdinReplay::Rewind() const {
  if (!regular_) return true;
  return ::lseek(STDIN_FILENO, offset_, SEEK_SET) == offset_;
}

SeparateRunOutcome MeasureWorkSpanSeparately(const SeparateRunContext& context,
                                             const std::vector<aggregator::WrittenProfile>& sampled,
                                             Progress& progress) {
  SeparateRunOutcome outcome;
  const std::vector<const aggregator::WrittenProfile*> candidates = ProcessesOnTheRuntime(sampled);
  if (candidates.empty()) return outcome;  // not a Cilk program: nothing to measure

  auto fail = [&outcome](std::string problem) {
    outcome.problem = std::move(problem);
    return outcome;
  };
  if (context.sampled_exit->exit_code != 0) {
    return fail("the program " + context.sampled_exit->description +
                ", so it was not run again to measure them (--workspan=same measures them in one run)");
  }
  if (!context.stdin_replay->Rewind()) {
    return fail("the instrumented run could not read standard input again (lseek: " +
                std::string(std::strerror(errno)) + ")");
  }
  auto dir = PrivateDir::Create();
  if (!dir.ok()) return fail(dir.status().message());
  const std::string socket = dir->path() + "/agents.sock";
  const std::string error_path = dir->path() + "/stderr";
  Fd discard(::open("/dev/null", O_WRONLY | O_CLOEXEC));
  Fd errors(::open(error_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (discard.get() < 0 || errors.get() < 0) {
    return fail("cannot prepare the instrumented run's output files: " + std::string(std::strerror(errno)));
  }

  aggregator::AggregatorOptions options;
  options.unix_socket_path = socket;
  const std::string out_dir = dir->path();
  options.output_path = [out_dir](const aggregator::ProcessKey& key) {
    return out_dir + "/" + std::to_string(key.sequence) + ".cilkprof";
  };
  options.skip_empty_profiles = true;  // processes off the runtime measure nothing here
  auto started = aggregator::Aggregator::Start(std::move(options));
  if (!started.ok()) return fail("cannot start the profile collector: " + started.status().message());
  std::unique_ptr<aggregator::Aggregator> collector = std::move(*started);

  progress.Stage("running the program again, instrumented, to measure work and span (--workspan=same: once)");
  ChildStdio stdio;
  stdio.out = discard.get();
  stdio.err = errors.get();
  auto child = RunChild(
      context.program_path, context.command, context.environment(socket), *context.signals, *context.inherited,
      [&collector](pid_t pid) { collector->SetProgramPid(static_cast<uint32_t>(pid)); }, stdio);
  if (!child.ok()) {
    collector->Finish(std::chrono::milliseconds(0));
    return fail("the instrumented run could not start: " + child.status().message());
  }
  progress.Stage("collecting the work/span figures");
  std::vector<aggregator::WrittenProfile> measured = collector->Finish(kDrain);
  collector.reset();
  if (child->exit_code != 0) {
    if (child->signal == SIGINT || child->signal == SIGTERM || child->signal == SIGHUP) {
      outcome.signal = child->signal;
    }
    return fail("the instrumented run (the second run of the program) " + child->description +
                LastLines(error_path, kErrorLinesShown));
  }

  // The i-th process of an executable in the sampled run is the i-th in this one.
  std::map<std::string, std::vector<const aggregator::WrittenProfile*>> by_executable;
  std::stable_sort(measured.begin(), measured.end(),
                   [](const auto& a, const auto& b) { return a.process.sequence < b.process.sequence; });
  // Processes that measured nothing count too: a fork child that ran no top-level
  // computation is one (it inherited the runtime; nothing to join into its profile).
  for (const aggregator::WrittenProfile& profile : measured) {
    if (!profile.recorded_nothing && (profile.path.empty() || !profile.status.ok())) continue;
    by_executable[profile.process.executable].push_back(&profile);
  }
  std::map<std::string, size_t> seen;
  std::vector<std::string> problems;
  for (const aggregator::WrittenProfile* candidate : candidates) {
    const std::string& executable = candidate->process.executable;
    const size_t index = seen[executable]++;
    const auto& match = by_executable[executable];
    if (index >= match.size()) {
      problems.push_back(candidate->path + ": the instrumented run had no such process");
      continue;
    }
    if (match[index]->recorded_nothing) continue;  // no computation ran in it: no work or span
    if (Status grafted = Graft(match[index]->path, candidate->path); !grafted.ok()) {
      problems.push_back(candidate->path + ": " + grafted.message());
    }
  }
  if (!problems.empty()) {
    std::string text = "not joined into ";
    for (size_t i = 0; i < problems.size(); ++i) text += (i ? "; " : "") + problems[i];
    return fail(text);
  }
  return outcome;
}

}  // namespace cilkprof::cli
