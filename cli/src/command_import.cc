// `cilkprof import SPILL [-o PROFILE]`: converts an agent's spill file (written when
// no aggregator was reachable) into a profile.
#include <sys/stat.h>

#include <cstdio>

#include "cilkprof/aggregator/import.h"
#include "cilkprof/aggregator/profile_io.h"
#include "cilkprof/views/summary.h"
#include "commands.h"
#include "output_naming.h"

namespace cilkprof::cli {

int RunImport(const ImportArgs& args) {
  struct stat st {};
  if (::stat(args.spill.c_str(), &st) != 0) {
    PrintError("cannot read spill file '" + args.spill + "': no such file");
    return kExitFailure;
  }
  std::string output = args.output;
  if (output.empty()) {
    std::string stem = args.spill;
    const size_t slash = stem.rfind('/');
    if (slash != std::string::npos) stem = stem.substr(slash + 1);
    const size_t dot = stem.rfind('.');
    if (dot != std::string::npos && dot > 0) stem.resize(dot);
    output = FirstFreeProfilePath("", ProfileStem(stem), {});
  } else if (::stat(output.c_str(), &st) == 0 && !args.force) {
    PrintError("'" + output + "' already exists; choose another -o FILE or add --force to replace it");
    return kExitUsage;
  }
  auto report = aggregator::ImportFrameStream(args.spill, output);
  if (!report.ok()) {
    PrintError(report.status().message());
    return kExitFailure;
  }
  if (!args.quiet) {
    std::string text = "Imported " + args.spill + " (" + std::to_string(report->messages) + " messages" +
                       (report->complete ? "" : ", incomplete") + ")\n";
    if (auto profile = aggregator::ReadProfileFile(report->path); profile.ok()) {
      text += views::RenderSummaryText(views::Summarize(*profile, report->path, 5));
    } else {
      text += "Profile          " + report->path + "\n";
    }
    std::fwrite(text.data(), 1, text.size(), stderr);
  }
  return 0;
}

}  // namespace cilkprof::cli
