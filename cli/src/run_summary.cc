// The summary `cilkprof run` and `cilkprof attach` print when the profile is written.
#include "run_summary.h"

#include <algorithm>
#include <cstdio>

#include "analysis_input.h"
#include "cilkprof/views/summary.h"
#include "cilkprof/views/workspan.h"

namespace cilkprof::cli {

std::vector<std::string> WriteProblems(const std::vector<aggregator::WrittenProfile>& written,
                                       const ProfileNaming& naming, bool writer_failures) {
  std::vector<std::string> out;
  for (const auto& profile : written) {
    if (profile.recorded_nothing) continue;
    const std::string who =
        "the profile of pid " + std::to_string(profile.process.pid) + " (" + profile.process.executable + ")";
    if (!profile.status.ok() && !writer_failures) continue;
    if (!profile.status.ok() && profile.path.empty()) {
      out.push_back(who + " could not be written: " + profile.status.message());
    } else if (!profile.status.ok()) {
      out.push_back(who + " could not be written where asked (" + profile.status.message() +
                    "); it was written to " + profile.path + " instead");
    } else if (naming.IsProgram(profile.process) && !naming.diversion().empty()) {
      out.push_back(naming.diversion() + "; " + who + " was written to " + profile.path);
    }
  }
  return out;
}

namespace {

// "/usr/bin/env -> /usr/bin/bash (x4) -> /usr/bin/python3.11": the images a process
// exec'd through, then the last one; repeats in a row counted, not listed.
std::string ExecChainText(const aggregator::ProcessKey& process) {
  std::vector<std::string> images = process.exec_chain;
  images.push_back(process.executable);
  std::string out;
  for (size_t i = 0; i < images.size();) {
    size_t same = 1;
    while (i + same < images.size() && images[i + same] == images[i]) ++same;
    if (!out.empty()) out += " -> ";
    out += images[i];
    if (same > 1) out += " (x" + std::to_string(same) + ")";
    i += same;
  }
  return out;
}

// "37 more processes recorded no samples; no profile was written for them (bash x20,
// readlink x9, ...)": the helpers a wrapper script forks, in one line.
std::string RecordedNothingLine(const std::vector<aggregator::WrittenProfile>& written) {
  std::vector<std::pair<std::string, size_t>> programs;  // basename, count
  size_t count = 0;
  for (const auto& profile : written) {
    if (!profile.recorded_nothing) continue;
    ++count;
    const std::string& exe = profile.process.executable;
    const std::string name = exe.substr(exe.rfind('/') == std::string::npos ? 0 : exe.rfind('/') + 1);
    auto known = std::find_if(programs.begin(), programs.end(), [&](const auto& p) { return p.first == name; });
    if (known == programs.end()) {
      programs.emplace_back(name, 1);
    } else {
      ++known->second;
    }
  }
  if (count == 0) return "";
  std::stable_sort(programs.begin(), programs.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string list;
  for (const auto& [name, n] : programs) {
    list += (list.empty() ? "" : ", ") + name + (n > 1 ? " x" + std::to_string(n) : "");
  }
  return "cilkprof: " + std::to_string(count) + (count == 1 ? " more process" : " more processes") +
         " recorded no samples; no profile was written for " + (count == 1 ? "it" : "them") + " (" + list +
         ")\n";
}

}  // namespace

void PrintRunSummary(std::vector<aggregator::WrittenProfile> written, const std::string& headline,
                     const ProfileNaming& naming, const std::string& workspan_note, Progress& progress) {
  // The profile with the most samples (the program the user meant, even behind a
  // wrapper that forked it) first, then the others; the program itself first on a tie.
  std::stable_sort(written.begin(), written.end(), [](const auto& a, const auto& b) {
    if (a.totals.samples() != b.totals.samples()) return a.totals.samples() > b.totals.samples();
    return a.process.sequence < b.process.sequence;
  });
  size_t shown = 0;
  for (const auto& profile : written) shown += profile.path.empty() ? 0 : 1;
  std::string out = "\ncilkprof: " + headline + "\n";
  for (const std::string& problem : WriteProblems(written, naming, false)) out += "cilkprof: " + problem + "\n";
  std::string main_path;
  for (const auto& profile : written) {
    if (profile.recorded_nothing || profile.path.empty()) continue;  // one line below, or above
    if (main_path.empty()) {
      main_path = profile.path;
      progress.Stage("summarizing " + profile.path);
      auto loaded = ReadForAnalysis(profile.path);
      if (loaded.ok()) {
        out += views::RenderSummaryText(views::Summarize(loaded->profile, loaded->nodes, profile.path, 5));
        if (!profile.process.exec_chain.empty()) out += "Exec chain       " + ExecChainText(profile.process) + "\n";
        // Work and span, for programs on the Cilk runtime (issue 5).
        if (auto figures = views::WholeProgram(loaded->profile); figures.ok()) {
          out += views::RenderWorkSpanText(*figures);
          out += "Call sites (work and span): cilkprof view callsites " + profile.path + "\n";
        }
        if (!workspan_note.empty()) out += "Work and span    " + workspan_note + "\n";
      } else {
        out += "Profile          " + profile.path + " (" + loaded.status().message() + ")\n";
      }
      if (shown > 1) out += "Further profiles (other processes):\n";
    } else {
      out += "  " + profile.path + "  pid " + std::to_string(profile.process.pid) + ", " +
             (profile.process.exec_chain.empty() ? profile.process.executable : ExecChainText(profile.process)) +
             ", " + std::to_string(profile.totals.samples()) + " samples, " + std::to_string(profile.threads) +
             " threads\n";
    }
  }
  out += RecordedNothingLine(written);
  if (!main_path.empty()) out += "View it with: cilkprof view top-down " + main_path + "\n";
  progress.Clear();
  std::fwrite(out.data(), 1, out.size(), stderr);
}

}  // namespace cilkprof::cli
