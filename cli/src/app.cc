#include "app.h"

#include <pthread.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <algorithm>
#include <cstdio>
#include <exception>
#include <iostream>
#include <limits>

#include "commands.h"
#include "export/exporters.h"
#include "stderr_logging.h"

namespace cilkprof::cli {
namespace {

std::string g_tool = "cilkprof";
int g_die_by_signal = 0;

// Ends the process by `sig`'s default action (see DieBySignalOnExit).
void DieBySignal(int sig) {
  std::fflush(nullptr);
  std::signal(sig, SIG_DFL);
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, sig);
  ::pthread_sigmask(SIG_UNBLOCK, &only, nullptr);
  ::raise(sig);
}

const char* const kRunFooter =
    "The program runs with the agent preloaded (LD_PRELOAD); its output and exit status are\n"
    "untouched. The profile goes to -o FILE, by default <program>.cilkprof (or\n"
    "<program>.N.cilkprof: an existing file is never overwritten). Forked or exec'd\n"
    "processes get their own profiles next to it. Exit status: the program's (128+N when\n"
    "killed by signal N); 127 program not found, 126 it cannot be run under the agent,\n"
    "125 cilkprof failed, 2 usage error.";

// Registers the options of `run` on `app` (the `run` subcommand, or cilkprof-run).
void AddRunOptions(CLI::App& app, RunArgs& args, double& frequency) {
  app.add_option("-o,--output", args.output, "Profile file to write (default: <program>.cilkprof, never overwriting)");
  app.add_flag("-f,--force", args.force, "Replace the -o file if it exists");
  app.add_option("--clock", args.clock, "What a sample measures: cpu (CPU time of each thread) or wall (also blocked time)")
      ->check(CLI::IsMember({"cpu", "wall"}))
      ->default_str("cpu");
  auto* period = app.add_option("--period", args.period, "Sampling period with a unit: 1ms (default), 500us, 2s");
  auto* freq = app.add_option("-F,--freq", frequency, "Sampling frequency in Hz (1000 = a 1ms period), like perf -F");
  period->excludes(freq);
  app.add_option("--unwind", args.unwind, "Stack unwinding: dwarf (default, exact) or fp (frame pointers, faster)")
      ->check(CLI::IsMember({"dwarf", "fp"}))
      ->default_str("dwarf");
  app.add_flag("--no-follow-fork", args.no_follow_fork, "Do not profile children the program forks");
  auto* workspan = app.add_option_function<std::string>(
                           "--workspan",
                           [&args](const std::string& mode) {
                             args.workspan = mode;
                             args.workspan_given = true;
                           },
                                  "Work and span, for programs on the Cilk runtime or on libomp (OpenMP tasks): separate (default: a second, "
                                  "instrumented run, so the samples are not dilated), same (in the sampled run: one "
                                  "run, dilated samples) or off")
                       ->check(CLI::IsMember({"separate", "same", "off"}))
                       ->default_str("separate");
  auto* no_workspan = app.add_flag_callback(
      "--no-workspan",
      [&args] {
        args.workspan = "off";
        args.workspan_given = true;
      },
      "Do not measure work and span (--workspan=off)");
  no_workspan->excludes(workspan);
  auto* strands = app.add_flag("--strands", args.strands,
                               "Also measure work and span per strand (see `cilkprof view strands`; costs a table "
                               "lookup at every strand boundary)");
  strands->excludes(no_workspan);
  app.add_flag("--timeline", args.timeline,
               "Also record a per-thread timeline: every sample with its time, scheduler state and context, and "
               "the runtime's steals and sync waits (see `cilkprof view timeline`, export --format chrome-trace)");
  app.add_flag("--standby", args.standby,
               "Start the program with the agent in standby: nothing is sampled until `cilkprof attach PID` "
               "(no profile is written by the run itself)");
  app.add_option("--openmp", args.openmp,
                 "OpenMP runtime of the program: auto (its own; warns when that is GCC's libgomp, which has no "
                 "task-level view), libomp (run a g++ -fopenmp program on LLVM's libomp, with OMPT) or off (its own, "
                 "no warning)")
      ->check(CLI::IsMember({"auto", "libomp", "off"}))
      ->default_str("auto");
  app.add_flag("-q,--quiet", args.quiet, "Print no summary (errors are still printed)");
  app.add_option("command", args.command, "PROGRAM [ARGS...] (put them after --)")->required();
  app.footer(kRunFooter);
}

// Everything from the program's name on belongs to the program, options included,
// even without "--" (as with env, nice, perf record): inserts "--" before the first
// argument of `args` (from `first`) that is neither a run option nor its value.
std::vector<std::string> SeparateProgram(std::vector<std::string> args, size_t first) {
  static const std::vector<std::string> kWithValue = {"-o",       "--output", "--clock",   "--period",
                                                      "-F",       "--freq",   "--unwind", "--workspan",
                                                      "--openmp"};
  for (size_t i = first; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") break;
    if (arg.size() > 1 && arg[0] == '-') {
      if (std::find(kWithValue.begin(), kWithValue.end(), arg) != kWithValue.end()) ++i;  // skip its value
      continue;
    }
    args.insert(args.begin() + static_cast<std::ptrdiff_t>(i), "--");
    break;
  }
  return args;
}

int Usage(const CLI::App& app, const CLI::ParseError& e) {
  std::string message = e.what();
  if (!message.empty() && message.back() == '\n') message.pop_back();
  // The "--" we insert before a program's name is not the user's mistake.
  for (const std::string noise : {": -- ", " -- "}) {
    for (size_t at; (at = message.find(noise)) != std::string::npos;) message.replace(at, noise.size(), noise.substr(0, noise.size() - 3));
  }
  if (message == "command is required") message = "no program given; usage: " + app.get_name() + " [options] -- PROGRAM [ARGS...]";
  PrintError(message);
  std::fprintf(stderr, "Run '%s --help' for usage.\n", app.get_name().c_str());
  return kExitUsage;
}

int Dispatch(int argc, char** argv, Entry entry) {
  ViewArgs view_args;
  SummaryArgs summary_args;
  ImportArgs import_args;
  ExportArgs export_args;
  RunArgs run_args;
  double frequency = 0;
  uint32_t depth = 0;

  const bool run_only = entry == Entry::kCilkprofRun;
  CLI::App app{run_only ? "Profile a program: cilkprof-run [options] -- PROGRAM [ARGS...] (same as cilkprof run)"
                        : "Cilkprof: a sampling calling-context profiler for Cilk-style task-parallel programs",
               run_only ? "cilkprof-run" : "cilkprof"};
  app.set_version_flag("--version", std::string("cilkprof ") + CILKPROF_VERSION);

  CLI::App* run = nullptr;
  CLI::App* view = nullptr;
  CLI::App* summary = nullptr;
  CLI::App* import = nullptr;
  CLI::App* exporter = nullptr;
  CLI::App* attacher = nullptr;
  CLI::App* detacher = nullptr;
  CLI::App* flamegraph = nullptr;
  ExportArgs flamegraph_args;
  CLI::App* plotter = nullptr;
  PlotArgs plot_args;
  AttachArgs attach_args;
  DetachArgs detach_args;
  double attach_frequency = 0;
  CLI::Option* depth_option = nullptr;
  CLI::Option* threshold_option = nullptr;
  double threshold = 0;
  CLI::Option* freq_option = nullptr;
  size_t timeline_buckets = 0;
  CLI::Option* buckets_option = nullptr;
  if (run_only) {
    AddRunOptions(app, run_args, frequency);
    freq_option = app.get_option("--freq");
  } else {
    app.require_subcommand(1);
    run = app.add_subcommand("run", "Profile a program: cilkprof run [options] -- PROGRAM [ARGS...]");
    AddRunOptions(*run, run_args, frequency);
    freq_option = run->get_option("--freq");

    view = app.add_subcommand("view", "Show a profile: top-down (calling contexts), bottom-up (callers), flat, locks, timeline");
    view->add_option("view", view_args.kind, "top-down, bottom-up, flat, callsites, strands, locks or timeline")
        ->required()
        ->check(CLI::IsMember({"top-down", "bottom-up", "flat", "callsites", "strands", "locks", "timeline"}));
    view->add_option("--sort", view_args.sort,
                     "callsites: sort by COLUMN (work_on_work, span_on_span, parallelism, count, caller, ...); "
                     "strands: work, span, count, function, start, end");
    view->add_option("profile", view_args.profile, "Profile file (.cilkprof)")->required();
    depth_option = view->add_option("--depth", depth, "Show N levels below the root");
    threshold_option = view->add_option("--threshold", threshold,
                                        "Hide rows below PCT percent of the program total (by the sort metric; locks: "
                                        "of all locks' wait); text default 0.5, json and csv default 0 (every row)")
                           ->check(CLI::Range(0.0, 100.0));
    view->add_option("--focus", view_args.focus,
                     "Root the view at FUNCTION (all its contexts merged); locks: only the locks whose name or a "
                     "holder or waiter context matches REGEX");
    buckets_option =
        view->add_option("--buckets", timeline_buckets,
                         "timeline: time buckets, one character each (default: fit the terminal; 80 columns without one)")
            ->check(CLI::Range(1, 100000));
    view->add_flag("--hot-path", view_args.hot_path, "Expand only while a child holds at least half of its parent");
    view->add_option("--metric", view_args.metric, "Metric to sort and threshold by (default: work)");
    view->add_option("--format", view_args.format, "text, json or csv")
        ->check(CLI::IsMember({"text", "json", "csv"}))
        ->default_str("text");
    view->add_option("--inline", view_args.inline_mode,
                     "keep: inlined functions are rows of their own, marked (inline); fold: charge them to the "
                     "function they were inlined into")
        ->check(CLI::IsMember({"keep", "fold"}))
        ->default_str("keep");

    summary = app.add_subcommand("summary", "One-screen summary of a profile");
    summary->add_option("profile", summary_args.profile, "Profile file (.cilkprof)")->required();
    summary->add_option("--format", summary_args.format, "text or json")
        ->check(CLI::IsMember({"text", "json"}))
        ->default_str("text");
    summary->add_option("--top", summary_args.top, "How many top functions to list")->check(CLI::Range(0, 1000));
    summary->add_option("--inline", summary_args.inline_mode,
                        "keep: inlined functions are ranked on their own, marked (inline); fold: charge them to the "
                        "function they were inlined into")
        ->check(CLI::IsMember({"keep", "fold"}))
        ->default_str("keep");
    summary->add_flag("--what-if", summary_args.what_if,
                      "Parallelism if the annotated regions' critical work were 2..32 times smaller");

    exporter = app.add_subcommand("export", "Write a profile in another tool's format");
    exporter->add_option("profile", export_args.profile, "Profile file (.cilkprof)")->required();
    std::string format_help = "Output format:";
    std::vector<std::string> format_names;
    for (const exporters::Format& f : exporters::Formats()) {
      format_help += " " + f.name + " (" + f.description + ");";
      format_names.push_back(f.name);
    }
    format_help.back() = '.';
    exporter->add_option("--format", export_args.format, format_help)
        ->check(CLI::IsMember(format_names))
        ->default_str("cilkscale-csv");
    exporter->add_option("-o,--output", export_args.output,
                         "File to write (default: standard output; binary formats need it)");
    exporter->add_option("--metric", export_args.metric,
                         "The metric to weigh by, where the format has one weight (folded, svg): work (default), "
                         "idleness, overhead, samples, lock_wait, ...");
    exporter->add_flag("--inverted", export_args.inverted,
                       "Flame graphs: an icicle of callers (each function's callers below it) instead of callees");

    flamegraph = app.add_subcommand("flamegraph", "Write an interactive flame graph (SVG): cilkprof flamegraph PROFILE -o FILE.svg");
    flamegraph->add_option("profile", flamegraph_args.profile, "Profile file (.cilkprof)")->required();
    flamegraph->add_option("-o,--output", flamegraph_args.output, "SVG file to write")->required();
    flamegraph->add_option("--metric", flamegraph_args.metric, "The metric the widths show: work (default), idleness, ...");
    flamegraph->add_flag("--inverted", flamegraph_args.inverted, "An icicle of callers instead of a flame graph of callees");

    plotter = app.add_subcommand("plot", "Draw a plot (SVG): cilkprof plot --speedup PROFILE... -o FILE.svg");
    plotter->add_flag("--speedup", plot_args.speedup,
                      "Cilkscale's speedup plot: the bounds from work and span, and the measured speedup of "
                      "profiles of several worker counts (CILK_NWORKERS) of one program and input");
    plotter->add_option("profiles", plot_args.profiles, "Profile files (.cilkprof)")->required();
    plotter->add_option("-o,--output", plot_args.output, "SVG file to write")->required();
    plotter->add_option("--workers", plot_args.workers,
                        "Each profile's worker count, in order (default: the runtime's workers in a timeline, "
                        "else the profile's threads)")
        ->delimiter(',');

    attacher = app.add_subcommand("attach", "Profile a running process: cilkprof attach PID [options]");
    attacher->add_option("pid", attach_args.pid, "Process to profile")->required()->check(CLI::PositiveNumber);
    attacher->add_option("-o,--output", attach_args.output,
                         "Profile file to write (default: <program>.cilkprof, never overwriting)");
    attacher->add_flag("-f,--force", attach_args.force, "Replace the -o file if it exists");
    attacher->add_option("--duration", attach_args.duration,
                         "How long to profile, with a unit: 30s, 10m (default: until Ctrl-C or the process ends)");
    attacher->add_option("--clock", attach_args.clock, "What a sample measures: cpu (CPU time of each thread) or wall")
        ->check(CLI::IsMember({"cpu", "wall"}))
        ->default_str("cpu");
    auto* attach_period = attacher->add_option("--period", attach_args.period, "Sampling period with a unit: 1ms (default), 500us");
    auto* attach_freq = attacher->add_option("-F,--freq", attach_frequency, "Sampling frequency in Hz, like perf -F");
    attach_period->excludes(attach_freq);
    attacher->add_option("--unwind", attach_args.unwind, "Stack unwinding: dwarf (default) or fp (frame pointers)")
        ->check(CLI::IsMember({"dwarf", "fp"}))
        ->default_str("dwarf");
    attacher->add_flag("--no-workspan", attach_args.no_workspan,
                       "Do not measure work and span (otherwise measured for the computations that begin after the attach)");
    attacher->add_flag("--timeline", attach_args.timeline,
                       "Also record a per-thread timeline of the window (samples, steals, sync waits)");
    attacher->add_option("--daemon", attach_args.daemon,
                         "Continuous mode: stream to the cilkprofd listening on SOCKET (one profile per window) and "
                         "return; end it with `cilkprof detach PID`");
    attacher->add_flag("-q,--quiet", attach_args.quiet, "Print no summary (errors are still printed)");
    attacher->footer(
        "A process started with the agent in standby (cilkprof run --standby, or LD_PRELOAD=libcilkprof_agent.so\n"
        "CILKPROF_STANDBY=1) is reached through its control socket; one started without the agent gets it\n"
        "loaded through ptrace first. After the detach the process runs as before. Exit status: 0 when the\n"
        "profile was written, 1 when the attach failed, 2 usage error.");

    detacher = app.add_subcommand("detach", "End an attach (the continuous one of attach --daemon): cilkprof detach PID");
    detacher->add_option("pid", detach_args.pid, "Process to detach from")->required()->check(CLI::PositiveNumber);

    import = app.add_subcommand("import", "Convert an agent spill file into a profile");
    import->add_option("spill", import_args.spill, "Spill file the agent wrote")->required();
    import->add_option("-o,--output", import_args.output, "Profile file to write (default: <spill>.cilkprof)");
    import->add_flag("-f,--force", import_args.force, "Replace the -o file if it exists");
    import->add_flag("-q,--quiet", import_args.quiet, "Print no summary");
  }

  // CLI11 takes the arguments in reverse order, without the executable's name.
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!run_only && !args.empty() && !args[0].empty() && args[0][0] != '-' && args[0] != "run" && args[0] != "view" && args[0] != "summary" && args[0] != "import" && args[0] != "export" && args[0] != "attach" && args[0] != "detach" && args[0] != "flamegraph" && args[0] != "plot") {
    PrintError("unknown command '" + args[0] +
               "'; the commands are run, attach, detach, view, summary, export, flamegraph, plot and import");
    std::fprintf(stderr, "Run 'cilkprof --help' for usage.\n");
    return kExitUsage;
  }
  if (run_only) {
    args = SeparateProgram(std::move(args), 0);
  } else if (!args.empty() && args[0] == "run") {
    args = SeparateProgram(std::move(args), 1);
  }
  std::reverse(args.begin(), args.end());
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    return Usage(app, e);
  }

  if (freq_option && freq_option->count() > 0) run_args.frequency_hz = frequency;

  if (run_only || (run && run->parsed())) {
    g_tool = run_only ? "cilkprof-run" : "cilkprof run";
    return RunProgram(run_args);
  }
  if (view && view->parsed()) {
    if (depth_option->count() > 0) view_args.depth = depth;
    if (threshold_option->count() > 0) view_args.threshold_percent = threshold;
    if (buckets_option->count() > 0) view_args.buckets = timeline_buckets;
    if (view_args.kind == "timeline") return RunTimelineView(view_args);
    return RunView(view_args);
  }
  if (summary && summary->parsed()) return RunSummary(summary_args);
  if (import && import->parsed()) return RunImport(import_args);
  if (exporter && exporter->parsed()) return RunExport(export_args);
  if (flamegraph && flamegraph->parsed()) {
    flamegraph_args.format = "svg";
    return RunExport(flamegraph_args);
  }
  if (plotter && plotter->parsed()) return RunPlot(plot_args);
  if (attacher && attacher->parsed()) {
    if (attacher->get_option("--freq")->count() > 0) attach_args.frequency_hz = attach_frequency;
    return RunAttach(attach_args);
  }
  if (detacher && detacher->parsed()) return RunDetach(detach_args);
  return kExitUsage;
}

}  // namespace

void SetToolName(const std::string& name) { g_tool = name; }

void DieBySignalOnExit(int signal) { g_die_by_signal = signal; }

void PrintError(const std::string& message) {
  std::fprintf(stderr, "%s: %s\n", g_tool.c_str(), message.c_str());
}

int WriteStdout(const std::string& text, const std::string& what) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (std::fflush(stdout) != 0) {
    PrintError("cannot write " + what + " to standard output");
    return kExitFailure;
  }
  return 0;
}

int Main(int argc, char** argv, Entry entry) {
  g_tool = entry == Entry::kCilkprofRun ? "cilkprof-run" : "cilkprof";
  RouteLogsToStderr(spdlog::level::warn);  // never into the program's or the view's stdout
  try {
    const int status = Dispatch(argc, argv, entry);
    if (g_die_by_signal != 0) DieBySignal(g_die_by_signal);
    return status;
  } catch (const std::exception& e) {
    PrintError(std::string("internal error: ") + e.what() + "; please report it");
  } catch (...) {
    PrintError("internal error; please report it");
  }
  return kExitRunFailed;
}

}  // namespace cilkprof::cli
