// `cilkprof run [options] -- PROGRAM [ARGS...]` (also `cilkprof-run`): runs a program
// under the preloaded agent with an embedded aggregator and writes its profile(s).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <cstdlib>
#include <mutex>
#include <set>

#include <spdlog/spdlog.h>

#include "agent_locator.h"
#include "analysis_input.h"
#include "child_process.h"
#include "cilkprof/aggregator/profile_io.h"
#include "cilkprof/aggregator/server.h"
#include "cilkprof/views/summary.h"
#include "cilkprof/views/workspan.h"
#include "commands.h"
#include "duration.h"
#include "output_naming.h"
#include "private_dir.h"
#include "progress.h"
#include "run_summary.h"
#include "openmp_runtime.h"
#include "program_check.h"
#include "separate_workspan_run.h"
#include "stderr_logging.h"

extern char** environ;

namespace cilkprof::cli {
namespace {

// How long to wait, after the program ends, for its agents' last messages.
constexpr std::chrono::milliseconds kDrain{3000};
// Which of the agent's two jobs a run of the program does (--workspan).
enum class Pass {
  kBoth,          // --workspan=same: sampled and instrumented (CILKPROF_WORKSPAN as inherited)
  kSampled,       // sampled only (CILKPROF_WORKSPAN=0): --workspan=off, or the first of separate
  kInstrumented,  // instrumented only (CILKPROF_SAMPLE_SOURCE=none): the second of separate
};

// Our environment with the agent first in LD_PRELOAD, without the variables `ours`
// says the caller sets itself (theirs win over inherited settings).
std::vector<std::string> PreloadEnvironment(const std::string& agent, const std::function<bool(const std::string&)>& ours) {
  std::vector<std::string> env;
  std::string preload = agent;
  for (char** e = environ; e && *e; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    if (name == "LD_PRELOAD") {
      const std::string existing = entry.substr(entry.find('=') + 1);
      if (!existing.empty()) preload += ":" + existing;
      continue;
    }
    if (!ours(name)) env.push_back(entry);
  }
  env.push_back("LD_PRELOAD=" + preload);
  return env;
}

// `env` with `dir` first in LD_LIBRARY_PATH (--openmp=libomp); unchanged for "".
void PrependLibraryDir(std::vector<std::string>& env, const std::string& dir) {
  if (dir.empty()) return;
  const std::string name = "LD_LIBRARY_PATH=";
  for (std::string& entry : env) {
    if (entry.rfind(name, 0) == 0) {
      const std::string existing = entry.substr(name.size());
      entry = name + dir + (existing.empty() ? "" : ":" + existing);
      return;
    }
  }
  env.push_back(name + dir);
}

// The program's environment: ours, with the agent preloaded and configured for `pass`.
std::vector<std::string> AgentEnvironment(const std::string& agent, const std::string& socket, const RunArgs& args,
                                          uint64_t period_ns, Pass pass, const OpenMpPlan& openmp) {
  std::vector<std::string> env = PreloadEnvironment(agent, [&](const std::string& name) {
    return name == "CILKPROF_SOCKET" || name == "CILKPROF_CLOCK" || name == "CILKPROF_PERIOD_NS" ||
        name == "CILKPROF_UNWIND" || name == "CILKPROF_FOLLOW_FORK" || (args.quiet && name == "CILKPROF_QUIET") ||
        (pass != Pass::kBoth && name == "CILKPROF_WORKSPAN") ||
        (pass == Pass::kInstrumented && name == "CILKPROF_SAMPLE_SOURCE") ||
        (args.strands && name == "CILKPROF_WS_STRANDS") || (args.timeline && name == "CILKPROF_TIMELINE");
  });
  env.push_back("CILKPROF_SOCKET=" + socket);
  env.push_back("CILKPROF_CLOCK=" + args.clock);
  env.push_back("CILKPROF_PERIOD_NS=" + std::to_string(period_ns));
  env.push_back("CILKPROF_UNWIND=" + args.unwind);
  env.push_back(std::string("CILKPROF_FOLLOW_FORK=") + (args.no_follow_fork ? "0" : "1"));
  if (args.quiet) env.push_back("CILKPROF_QUIET=1");
  if (pass == Pass::kSampled) env.push_back("CILKPROF_WORKSPAN=0");
  if (pass == Pass::kInstrumented) {
    env.push_back("CILKPROF_WORKSPAN=1");
    env.push_back("CILKPROF_SAMPLE_SOURCE=none");
  }
  if (args.strands) env.push_back("CILKPROF_WS_STRANDS=1");
  // The timeline describes the sampled run: the instrumented one has no samples.
  if (args.timeline && pass != Pass::kInstrumented) env.push_back("CILKPROF_TIMELINE=1");
  PrependLibraryDir(env, openmp.library_dir);
  return env;
}

// --standby: the program runs with the agent in standby (no collector, no profile of
// its own); `cilkprof attach PID` profiles it whenever asked.
int RunStandby(const std::string& path, const RunArgs& args, const std::string& agent, const InheritedFds& inherited,
               const OpenMpPlan& openmp) {
  std::vector<std::string> env = PreloadEnvironment(
      agent, [](const std::string& name) { return name == "CILKPROF_SOCKET" || name == "CILKPROF_STANDBY"; });
  env.push_back("CILKPROF_STANDBY=1");
  PrependLibraryDir(env, openmp.library_dir);
  ForwardedSignals signals;
  auto child = RunChild(path, args.command, env, signals, inherited, [&args](pid_t pid) {
    if (!args.quiet) {
      std::fprintf(stderr, "cilkprof: %s runs with the agent in standby as process %d; profile it with: cilkprof attach %d\n",
                   args.command[0].c_str(), static_cast<int>(pid), static_cast<int>(pid));
    }
  });
  if (!child.ok()) {
    PrintError(child.status().message());
    return kExitCannotExecute;
  }
  if (child->signal == SIGINT || child->signal == SIGTERM || child->signal == SIGHUP || child->signal == SIGPIPE) {
    DieBySignalOnExit(child->signal);
  }
  return child->exit_code;
}

}  // namespace

int RunProgram(const RunArgs& args) {
  // First, before we open anything: the program gets these descriptors and no others.
  const InheritedFds inherited_fds = InheritedFds::Snapshot();
  if (args.command.empty()) {
    PrintError("no program given; usage: cilkprof run [options] -- PROGRAM [ARGS...]");
    return kExitUsage;
  }
  uint64_t period_ns = 1'000'000;
  if (!args.period.empty()) {
    auto parsed = ParsePeriod(args.period);
    if (!parsed.ok()) {
      PrintError(parsed.status().message());
      return kExitUsage;
    }
    period_ns = *parsed;
  } else if (args.frequency_hz) {
    auto parsed = PeriodFromFrequency(*args.frequency_hz);
    if (!parsed.ok()) {
      PrintError(parsed.status().message());
      return kExitUsage;
    }
    period_ns = *parsed;
  }
  if (const std::string problem = OutputProblem(args.output, args.force); !problem.empty()) {
    PrintError(problem);
    return kExitUsage;
  }

  if (args.strands && args.workspan == "off") {
    PrintError("--strands measures work and span per strand: it cannot be combined with --workspan=off");
    return kExitUsage;
  }
  // Before the program can read any of it.
  const StdinReplay stdin_replay = StdinReplay::Note();
  bool separate = args.workspan == "separate";
  std::string workspan_note;
  if (separate && !stdin_replay.possible()) {
    if (args.workspan_given) {
      PrintError(stdin_replay.why_not() +
                 ", which a second run of the program could not read again: give the input as a file (< FILE), "
                 "or measure work and span in the sampled run with --workspan=same");
      return kExitUsage;
    }
    separate = false;
    workspan_note = "measured in the sampled run, not in a second one (" + stdin_replay.why_not() +
                    ", which a second run could not read again): the samples include the instrumentation's cost";
  }
  const Pass first_pass = args.workspan == "off" || separate ? Pass::kSampled : Pass::kBoth;

  const ProgramCheck program = CheckProgram(args.command[0], std::getenv("PATH"));
  if (!program.error.empty()) {
    PrintError(program.error);
    return program.exit_code;
  }
  auto agent = LocateAgent(std::getenv("CILKPROF_AGENT"), ExecutableDir(), CILKPROF_INSTALL_LIBDIR,
                           CILKPROF_INSTALL_RELATIVE_LIBDIR);
  if (!agent.ok()) {
    PrintError(agent.status().message());
    return kExitRunFailed;
  }

  // Made before the program runs and removed after it (and a second, instrumented run)
  // ended: the agents' socket and --openmp=libomp's libgomp.so.1 live there.
  auto dir = PrivateDir::Create();
  if (!dir.ok()) {
    PrintError(dir.status().message());
    return kExitRunFailed;
  }
  const OpenMpPlan openmp = PlanOpenMp(args.openmp, program.path, args.command[0], dir->path(), DefaultLibompCandidates());
  if (!openmp.error.empty()) {
    PrintError(openmp.error);
    return kExitRunFailed;
  }
  if (!openmp.warning.empty()) PrintError("warning: " + openmp.warning);

  if (args.standby) return RunStandby(program.path, args, *agent, inherited_fds, openmp);

  // The collector's progress messages are for the daemon's log; here the summary
  // says it all. Its warnings still show: dropped connections, and a profile written
  // elsewhere than asked or lost (the writer's warning or error, at the moment it
  // happens; the summary does not repeat it). With -q, none: RunProgram reports each
  // profile that is not where it was asked itself, once.
  RouteLogsToStderr(args.quiet ? spdlog::level::critical : spdlog::level::warn);

  // Before the aggregator starts its threads, so they inherit the blocked mask.
  ForwardedSignals signals;
  const std::string socket = dir->path() + "/agents.sock";

  auto naming = std::make_shared<ProfileNaming>(args.output, args.force, ProfileStem(program.path));
  aggregator::AggregatorOptions options;
  options.unix_socket_path = socket;
  options.output_path = [naming](const aggregator::ProcessKey& key) { return naming->PathFor(key); };
  options.skip_empty_profiles = true;  // PrintRunSummary lists them in one line
  auto started = aggregator::Aggregator::Start(std::move(options));
  if (!started.ok()) {
    PrintError("cannot start the profile collector: " + started.status().message());
    return kExitRunFailed;
  }
  std::unique_ptr<aggregator::Aggregator> collector = std::move(*started);

  auto child = RunChild(program.path, args.command, AgentEnvironment(*agent, socket, args, period_ns, first_pass, openmp), signals,
                        inherited_fds, [&naming, &collector](pid_t pid) {
                          naming->ProgramStarted(static_cast<uint32_t>(pid));
                          collector->SetProgramPid(static_cast<uint32_t>(pid));
                        });
  if (!child.ok()) {
    naming->ProgramStarted(std::nullopt);  // no-op if it was started (and exec failed)
    collector->Finish(std::chrono::milliseconds(0));
    PrintError(child.status().message());
    return kExitCannotExecute;
  }
  // From here on the user waits for us, not for the program: say what takes time.
  Progress progress(!args.quiet);
  progress.Stage("collecting the last samples and writing the profile");
  std::vector<aggregator::WrittenProfile> written = collector->Finish(kDrain);
  collector.reset();
  naming->Settle(&written);

  SeparateRunOutcome instrumented;
  if (separate && !written.empty()) {
    SeparateRunContext context;
    context.program_path = program.path;
    context.command = args.command;
    context.environment = [&](const std::string& second_socket) {
      return AgentEnvironment(*agent, second_socket, args, period_ns, Pass::kInstrumented, openmp);
    };
    context.signals = &signals;
    context.inherited = &inherited_fds;
    context.stdin_replay = &stdin_replay;
    context.sampled_exit = &*child;
    instrumented = MeasureWorkSpanSeparately(context, written, progress);
    if (!instrumented.problem.empty()) workspan_note = "not measured: " + instrumented.problem;
  }

  if (written.empty()) {
    progress.Clear();
    PrintError("no profile was written: the agent never reported (the program " + child->description +
               "); check that " + *agent + " loads into it (LD_PRELOAD) and that nothing unsets LD_PRELOAD");
  } else if (!args.quiet) {
    PrintRunSummary(written, "the program " + child->description, *naming, workspan_note, progress);
  } else {
    for (const std::string& problem : WriteProblems(written, *naming, true)) PrintError(problem);
    // A warning, like the profile's own problems: -q silences the summary, not these.
    if (!instrumented.problem.empty()) PrintError("work and span were not measured: " + instrumented.problem);
  }
  // The program's status comes first; when it succeeded, a profile that is not where
  // it was asked (written elsewhere, or lost) makes the run fail: scripts that read
  // the -o file must not go on as if it were there.
  const bool misplaced = !naming->diversion().empty() ||
                         std::any_of(written.begin(), written.end(), [](const aggregator::WrittenProfile& p) {
                           return !p.recorded_nothing && !p.status.ok();
                         });
  if (child->exit_code == 0 && misplaced) return kExitRunFailed;
  // A program killed by Ctrl-C, kill -TERM or -HUP ends cilkprof the same way once it
  // has cleaned up, so that a shell loop around cilkprof-run stops as it would around
  // the program (signals that dump core are not repeated: the core would be ours).
  if (child->signal == SIGINT || child->signal == SIGTERM || child->signal == SIGHUP || child->signal == SIGPIPE) {
    DieBySignalOnExit(child->signal);
  } else if (instrumented.signal != 0) {
    DieBySignalOnExit(instrumented.signal);  // Ctrl-C in the second run stops a loop just the same
  }
  return child->exit_code;
}

}  // namespace cilkprof::cli
