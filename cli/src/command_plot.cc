// `cilkprof plot --speedup PROFILE... -o FILE.svg`: Cilkscale's speedup-bounds plot
// (docs/USER_GUIDE.md, "Speedup plot"). The bounds are views::WholeProgram's speedup
// table (the one `cilkprof summary` prints) of the profile with the fewest workers
// that has work/span; with several profiles of one program and input run on different
// worker counts, each profile is also a measured point:
//   speedup(P) = T1 / TP, T = the run's wall-clock time (ProcessInfo end - start),
//   T1 = the mean over the 1-worker profiles given.
// The profile file does not record the runtime's worker count (CILK_NWORKERS); a
// profile's P is the number of its runtime workers seen in its timeline when it has
// one, else the number of threads it holds (on the Cilk runtime worker 0 is the main
// thread and the others are its workers; a program that starts threads of its own
// needs --workers).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>

#include "cilkprof/aggregator/profile_io.h"
#include "cilkprof/views/workspan.h"
#include "commands.h"
#include "speedup_plot_svg.h"

namespace cilkprof::cli {
namespace {

struct Run {
  std::string path;
  profile::Profile profile;  // tables only, no nodes
  uint32_t workers = 0;
  double seconds = 0;
};

uint32_t WorkersOf(const profile::Profile& p) {
  if (p.has_timeline()) {
    std::set<uint32_t> workers;
    for (const auto& track : p.timeline().tracks()) {
      if (track.worker_id_plus_1() != 0) workers.insert(track.worker_id_plus_1());
    }
    if (!workers.empty()) return static_cast<uint32_t>(workers.size());
  }
  return static_cast<uint32_t>(std::max(p.threads_size(), 1));
}

std::string Basename(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// "fib 30": the program's name and its arguments (argv[0]'s directory aside).
std::string CommandOf(const profile::Profile& p) {
  std::string command = Basename(p.process().executable());
  for (int i = 1; i < p.process().argv_size(); ++i) command += " " + p.process().argv(i);
  return command;
}

Status WriteSvg(const std::string& path, const std::string& text) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  std::string temporary = dir + "/.cilkprof-plot-XXXXXX";
  const int fd = mkstemp(temporary.data());
  if (fd < 0) return Status::Error("cannot write in " + dir + " (" + std::strerror(errno) + "); choose another -o path");
  fchmod(fd, 0644);
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  const int error = errno;
  if (close(fd) != 0 || done != text.size() || rename(temporary.c_str(), path.c_str()) != 0) {
    const int last = done != text.size() ? error : errno;
    unlink(temporary.c_str());
    return Status::Error("cannot write " + path + ": " + std::strerror(last));
  }
  return Status::Ok();
}

}  // namespace

int RunPlot(const PlotArgs& args) {
  if (!args.speedup) {
    PrintError("say which plot: cilkprof plot --speedup PROFILE... -o FILE.svg");
    return kExitUsage;
  }
  if (!args.workers.empty() && args.workers.size() != args.profiles.size()) {
    PrintError("--workers gives " + std::to_string(args.workers.size()) + " worker counts for " +
               std::to_string(args.profiles.size()) + " profiles; give one per profile, in the same order");
    return kExitUsage;
  }
  std::vector<Run> runs;
  for (size_t i = 0; i < args.profiles.size(); ++i) {
    auto read = aggregator::ReadProfileFile(args.profiles[i], [](uint32_t, const profile::Node&) {});
    if (!read.ok()) {
      PrintError(read.status().message());
      return kExitFailure;
    }
    Run run{args.profiles[i], std::move(*read)};
    run.workers = args.workers.empty() ? WorkersOf(run.profile) : args.workers[i];
    const auto& process = run.profile.process();
    run.seconds = process.end_unix_ns() > process.start_unix_ns()
                      ? static_cast<double>(process.end_unix_ns() - process.start_unix_ns()) / 1e9
                      : 0;
    if (!runs.empty() && CommandOf(run.profile) != CommandOf(runs.front().profile)) {
      PrintError("the profiles are of different programs or inputs: " + runs.front().path + " ran '" +
                 CommandOf(runs.front().profile) + "', " + run.path + " ran '" + CommandOf(run.profile) +
                 "'; give profiles of one program and input, run with different CILK_NWORKERS");
      return kExitFailure;
    }
    runs.push_back(std::move(run));
  }
  std::stable_sort(runs.begin(), runs.end(), [](const Run& a, const Run& b) { return a.workers < b.workers; });

  // The bounds: the first profile (fewest workers) with work/span.
  const Run* bounds = nullptr;
  for (const Run& run : runs) {
    if (run.profile.has_workspan()) {
      bounds = &run;
      break;
    }
  }
  if (bounds == nullptr) {
    PrintError((runs.size() == 1 ? runs.front().path : std::string("none of the profiles")) + " " +
               views::WholeProgram(runs.front().profile).status().message());
    return kExitFailure;
  }
  auto figures = views::WholeProgram(bounds->profile);
  if (!figures.ok()) {
    PrintError(bounds->path + " " + figures.status().message());
    return kExitFailure;
  }

  SpeedupPlot plot;
  plot.title = CommandOf(bounds->profile);
  plot.figures = std::move(*figures);
  double t1 = 0;
  int ones = 0;
  for (const Run& run : runs) {
    if (run.workers == 1 && run.seconds > 0) {
      t1 += run.seconds;
      ++ones;
    }
  }
  if (runs.size() > 1 && ones == 0) {
    PrintError("the measured speedups need a 1-worker run as T1: add a profile run with CILK_NWORKERS=1 "
               "(or say each profile's worker count with --workers)");
    return kExitFailure;
  }
  if (ones > 0) {
    t1 /= ones;
    for (const Run& run : runs) {
      if (run.seconds > 0) plot.measured.push_back({run.workers, t1 / run.seconds, run.path});
    }
    plot.measured_note = "measured: T1 / TP, wall-clock time of each run; T1 = the 1-worker run" +
                         std::string(ones > 1 ? "s' mean" : "");
  }
  if (Status written = WriteSvg(args.output, RenderSpeedupSvg(plot)); !written.ok()) {
    PrintError(written.message());
    return kExitFailure;
  }
  return 0;
}

}  // namespace cilkprof::cli
