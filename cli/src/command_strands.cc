// `cilkprof view strands PROFILE [--sort COLUMN] [--format text|json|csv]`: the
// per-strand work/span table (issue 5; docs/WORKSPAN.md "Strands").
#include <cstdio>

#include "cilkprof/aggregator/profile_io.h"
#include "cilkprof/views/strands.h"
#include "commands.h"

namespace cilkprof::cli {

int RunStrandsView(const ViewArgs& args) {
  auto profile = aggregator::ReadProfileFile(args.profile);
  if (!profile.ok()) {
    PrintError(profile.status().message());
    return kExitFailure;
  }
  auto rows = views::StrandRows(*profile);
  if (!rows.ok()) {
    PrintError(args.profile + " " + rows.status().message());
    return kExitFailure;
  }
  if (!args.sort.empty()) {
    if (Status sorted = views::SortStrands(&*rows, args.sort); !sorted.ok()) {
      PrintError(sorted.message());
      return kExitUsage;
    }
  }
  std::string out;
  if (args.format == "json") {
    out = views::RenderStrandsJson(*rows);
  } else if (args.format == "csv") {
    out = views::RenderStrandsCsv(*rows);
  } else {
    const std::string unit = profile->workspan().unit().empty() ? "ns" : profile->workspan().unit();
    out = "Strands of " + args.profile + " (" + profile->process().executable() + ", pid " +
          std::to_string(profile->process().pid()) + "); work and share of the span per strand, " + unit + "\n" +
          views::RenderStrandsText(*rows, unit);
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  if (std::fflush(stdout) != 0) {
    PrintError("cannot write the view to standard output");
    return kExitFailure;
  }
  return 0;
}

}  // namespace cilkprof::cli
