// `cilkprof export --format cilkscale-csv PROFILE [-o FILE]`: Cilkscale's CSV of work
// and span (issue 5), so Cilkscale's plotting scripts read Cilkprof profiles.
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "cilkprof/aggregator/profile_io.h"
#include "cilkprof/views/workspan.h"
#include "commands.h"

namespace cilkprof::cli {

int RunExport(const ExportArgs& args) {
  auto profile = aggregator::ReadProfileFile(args.profile);
  if (!profile.ok()) {
    PrintError(profile.status().message());
    return kExitFailure;
  }
  auto csv = views::RenderCilkscaleCsv(*profile);
  if (!csv.ok()) {
    PrintError(args.profile + " " + csv.status().message());
    return kExitFailure;
  }
  if (args.output.empty()) return WriteStdout(*csv, "the CSV");
  std::FILE* file = std::fopen(args.output.c_str(), "w");
  if (file == nullptr) {
    PrintError("cannot create " + args.output + ": " + std::strerror(errno) + "; choose another -o path");
    return kExitFailure;
  }
  const bool written = std::fwrite(csv->data(), 1, csv->size(), file) == csv->size();
  if (std::fclose(file) != 0 || !written) {
    PrintError("cannot write " + args.output + ": " + std::strerror(errno));
    return kExitFailure;
  }
  return 0;
}

}  // namespace cilkprof::cli
