// `cilkprof view callsites PROFILE [--sort COLUMN] [--format text|json|csv]`: the
// work/span call-site table (issue 5; docs/USER_GUIDE.md).
#include <cstdio>

#include "cilkprof/aggregator/profile_io.h"
#include "cilkprof/views/workspan.h"
#include "commands.h"

namespace cilkprof::cli {

int RunCallSitesView(const ViewArgs& args) {
  auto profile = aggregator::ReadProfileFile(args.profile);
  if (!profile.ok()) {
    PrintError(profile.status().message());
    return kExitFailure;
  }
  auto rows = views::CallSiteRows(*profile);
  if (!rows.ok()) {
    PrintError(args.profile + " " + rows.status().message());
    return kExitFailure;
  }
  if (!args.sort.empty()) {
    if (Status sorted = views::SortCallSites(&*rows, args.sort); !sorted.ok()) {
      PrintError(sorted.message());
      return kExitUsage;
    }
  }
  std::string out;
  if (args.format == "json") {
    out = views::RenderCallSitesJson(*rows);
  } else if (args.format == "csv") {
    out = views::RenderCallSitesCsv(*rows);
  } else {
    const std::string unit = profile->workspan().unit().empty() ? "ns" : profile->workspan().unit();
    out = "Call sites of " + args.profile + " (" + profile->process().executable() + ", pid " +
          std::to_string(profile->process().pid()) + "); work and span per call site, " + unit + "\n" +
          views::RenderCallSitesText(*rows, unit);
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  if (std::fflush(stdout) != 0) {
    PrintError("cannot write the view to standard output");
    return kExitFailure;
  }
  return 0;
}

}  // namespace cilkprof::cli
