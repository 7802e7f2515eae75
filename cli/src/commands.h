// The subcommands of `cilkprof`, each a function of its parsed arguments that returns
// the process exit status. Argument parsing (CLI11) lives in app.cc only.
//
// Exit status (documented in docs/USER_GUIDE.md):
//   0 success; 1 the command failed (unreadable profile, unknown --focus function...);
//   2 usage error (unknown option, bad value); `run` exits with the program's status
//   (128+N when a signal N killed it), or 127 when the program is not found, 126 when
//   it cannot be run under the agent, 125 when cilkprof itself could not profile it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cilkprof/views/build.h"

namespace cilkprof::cli {

inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitRunFailed = 125;
inline constexpr int kExitCannotExecute = 126;
inline constexpr int kExitNotFound = 127;

// Prints "<tool>: <message>" on stderr; the tool name is "cilkprof" or "cilkprof-run".
void PrintError(const std::string& message);
// Writes `text` to standard output; on failure prints "cannot write <what> to standard
// output" and returns kExitFailure, else 0.
int WriteStdout(const std::string& text, const std::string& what);
void SetToolName(const std::string& name);
// After the command has returned and cleaned up, Main ends the process by `signal`
// (default action) instead of returning its exit status.
void DieBySignalOnExit(int signal);

// Rows under this share of the total are hidden in text views unless --threshold says
// otherwise (perf report's callchain default): a terminal reader wants the rows that
// matter, and the full caller tree of a recursive program runs to gigabytes.
inline constexpr double kDefaultTextThreshold = 0.5;

struct ViewArgs {
  std::string kind;     // top-down, bottom-up, flat, callsites, strands, locks
  std::string profile;
  std::optional<uint32_t> depth;
  std::optional<double> threshold_percent;  // none: kDefaultTextThreshold for text, 0 otherwise
  std::string focus;
  bool hot_path = false;
  std::string metric;   // "" = default
  std::string format = "text";
  std::string sort;     // callsites, strands: the column to sort by ("" = work)
  std::string inline_mode = "keep";  // keep: inlined functions are rows; fold: charged to their caller
  std::optional<size_t> buckets;  // timeline: time buckets (none: fit the terminal, 80 columns without one)
};
int RunView(const ViewArgs& args);
// The views' build options for --inline keep|fold (command_view.cc).
views::BuildOptions BuildOptionsOf(const std::string& inline_mode);
int RunCallSitesView(const ViewArgs& args);  // `view callsites` (command_callsites.cc)
int RunStrandsView(const ViewArgs& args);    // `view strands` (command_callsites.cc)
int RunLocksView(const ViewArgs& args);      // `view locks` (command_locks.cc)
int RunTimelineView(const ViewArgs& args);   // `view timeline` (command_timeline.cc)

struct SummaryArgs {
  std::string profile;
  std::string format = "text";
  size_t top = 10;
  bool what_if = false;  // the causal what-if table instead of the summary
  std::string inline_mode = "keep";
};
int RunSummary(const SummaryArgs& args);

// `cilkprof export --format cilkscale-csv PROFILE` (command_export.cc).
// `cilkprof export` (command_export.cc; the formats: export/exporters.h), also behind
// `cilkprof flamegraph` (format svg).
struct ExportArgs {
  std::string profile;
  std::string format = "cilkscale-csv";
  std::string output;  // "" = standard output
  std::string metric;  // "" = the format's default
  bool inverted = false;
};
int RunExport(const ExportArgs& args);

// `cilkprof plot --speedup PROFILE... -o FILE.svg` (command_plot.cc): Cilkscale's
// speedup-bounds plot, with measured points from profiles of several worker counts.
struct PlotArgs {
  bool speedup = false;
  std::vector<std::string> profiles;
  std::string output;
  std::vector<uint32_t> workers;  // per profile, in order; empty: from the profiles
};
int RunPlot(const PlotArgs& args);

struct ImportArgs {
  std::string spill;
  std::string output;  // "" = <spill stem>.cilkprof, never overwriting
  bool force = false;
  bool quiet = false;
};
int RunImport(const ImportArgs& args);

struct RunArgs {
  std::vector<std::string> command;  // PROGRAM ARGS...
  std::string output;                // "" = default name
  bool force = false;
  std::string clock = "cpu";
  std::string period;                // DURATION text, "" = not given
  std::optional<double> frequency_hz;
  std::string unwind = "dwarf";
  bool no_follow_fork = false;
  bool quiet = false;
  // Work/span instrumentation: "separate" (a second, instrumented run joined into the
  // sampled one: separate_workspan_run.h), "same" (in the sampled run) or "off"
  // (CILKPROF_WORKSPAN=0; also --no-workspan).
  std::string workspan = "separate";
  bool workspan_given = false;  // --workspan on the command line (else the default)
  bool strands = false;      // CILKPROF_WS_STRANDS=1: per-strand work/span metrics too
  // CILKPROF_STANDBY=1: the agent arms nothing until `cilkprof attach PID`; no profile
  // is written by the run itself.
  bool standby = false;
  // CILKPROF_TIMELINE=1: a per-thread timeline of samples, steals and sync waits
  // (issue 16); with --workspan=separate, in the sampled run only.
  bool timeline = false;
  // Which OpenMP runtime the program runs on (openmp_runtime.h): auto (its own; a
  // warning when that is libgomp, which has no OMPT), libomp (LLVM's, with OMPT, in
  // place of libgomp) or off (its own, no warning).
  std::string openmp = "auto";
};
int RunProgram(const RunArgs& args);

// `cilkprof attach PID` (command_attach.cc; docs/USER_GUIDE.md "Profiling a running
// service"): profiles a running process through its standby agent, loading the agent
// with ptrace first when the process has none.
struct AttachArgs {
  pid_t pid = 0;
  std::string output;
  bool force = false;
  std::string duration;  // "" = until Ctrl-C or the process ends
  std::string clock = "cpu";
  std::string period;
  std::optional<double> frequency_hz;
  std::string unwind = "dwarf";
  bool no_workspan = false;
  bool timeline = false;  // control word timeline=1 (issue 16)
  std::string daemon;  // continuous mode: stream to the cilkprofd at this socket
  bool quiet = false;
};
int RunAttach(const AttachArgs& args);

// `cilkprof detach PID`: ends an attach (the continuous one of `attach --daemon`).
struct DetachArgs {
  pid_t pid = 0;
};
int RunDetach(const DetachArgs& args);

}  // namespace cilkprof::cli
