// `--format cilkscale-csv`: Cilkscale's CSV of work and span (issue 5), so Cilkscale's
// plotting scripts read Cilkprof profiles.
#include "cilkprof/views/workspan.h"
#include "export/exporters.h"

namespace cilkprof::cli::exporters {

Status WriteCilkscaleCsv(const AnalysisInput& input, const ExportOptions& options, std::ostream& out) {
  auto csv = views::RenderCilkscaleCsv(input.profile);
  if (!csv.ok()) return Status::Error(options.profile_path + " " + csv.status().message());
  out << *csv;
  return Status::Ok();
}

}  // namespace cilkprof::cli::exporters
