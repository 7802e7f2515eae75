// The work/span tables (issue 5; docs/USER_GUIDE.md):
//   cilkprof view callsites PROFILE [--sort COLUMN] [--format text|json|csv]
//   cilkprof view strands   PROFILE [--sort COLUMN] [--format text|json|csv]
#include "cilkprof/aggregator/profile_io.h"
#include "cilkprof/views/strands.h"
#include "cilkprof/views/workspan.h"
#include "commands.h"

namespace cilkprof::cli {
namespace {

// How one table is made: rows from a profile, sorting, the three renderers, and the
// words of its text title ("Call sites of P (...); work and span per call site"). The
// title names no unit: the text renderers scale durations as the other views do and
// say the unit in each column's header ("work-on-work (ms)").
template <typename Row>
struct Table {
  Result<std::vector<Row>> (*rows)(const profile::Profile&);
  Status (*sort)(std::vector<Row>*, const std::string&);
  std::string (*text)(const std::vector<Row>&, const std::string&);
  std::string (*json)(const std::vector<Row>&);
  std::string (*csv)(const std::vector<Row>&);
  const char* title;  // "Call sites of"
  const char* per;    // "work and span per call site"
};

template <typename Row>
int RunTable(const ViewArgs& args, const Table<Row>& table) {
  auto profile = aggregator::ReadProfileFile(args.profile);
  if (!profile.ok()) {
    PrintError(profile.status().message());
    return kExitFailure;
  }
  auto rows = table.rows(*profile);
  if (!rows.ok()) {
    PrintError(args.profile + " " + rows.status().message());
    return kExitFailure;
  }
  if (!args.sort.empty()) {
    if (Status sorted = table.sort(&*rows, args.sort); !sorted.ok()) {
      PrintError(sorted.message());
      return kExitUsage;
    }
  }
  std::string out;
  if (args.format == "json") {
    out = table.json(*rows);
  } else if (args.format == "csv") {
    out = table.csv(*rows);
  } else {
    const std::string unit = profile->workspan().unit().empty() ? "ns" : profile->workspan().unit();
    out = std::string(table.title) + " " + args.profile + " (" + profile->process().executable() + ", pid " +
          std::to_string(profile->process().pid()) + "); " + table.per + "\n" + table.text(*rows, unit);
  }
  return WriteStdout(out, "the view");
}

}  // namespace

int RunCallSitesView(const ViewArgs& args) {
  return RunTable(args, Table<views::CallSiteRow>{views::CallSiteRows, views::SortCallSites,
                                                  views::RenderCallSitesText, views::RenderCallSitesJson,
                                                  views::RenderCallSitesCsv, "Call sites of",
                                                  "work and span per call site"});
}

int RunStrandsView(const ViewArgs& args) {
  return RunTable(args, Table<views::StrandRow>{views::StrandRows, views::SortStrands, views::RenderStrandsText,
                                                views::RenderStrandsJson, views::RenderStrandsCsv, "Strands of",
                                                "work and share of the span per strand"});
}

}  // namespace cilkprof::cli
