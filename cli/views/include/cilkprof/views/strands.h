// The strand table of the work/span instrumentation (`cilkprof view strands`;
// docs/WORKSPAN.md "Strands"): for every strand -- the serial code between two
// parallel-control points, keyed by where it starts and where it ends, as in the
// Cilkprof thesis -- how often it ran, its work, and its share of the critical path.
// Recorded only with `cilkprof run --strands` (CILKPROF_WS_STRANDS=1).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cilkprof/common/status.h"
#include "cilkprof/profile.pb.h"

namespace cilkprof::views {

struct StrandRow {
  std::string function;  // the code the strand runs in (for a spawned child's first
                         // strand, the spawned callable when known)
  std::string start_point, end_point;  // enter, spawn, child_end, continue, sync, sync_end, exit, return, region
  std::string start_file, end_file;
  uint32_t start_line = 0, end_line = 0;
  uint64_t count = 0;  // executions
  // A strand is serial and never nests: work-on-work = span-on-work = its time over
  // all executions; work-on-span = span-on-span = its time on the critical path.
  double work = 0, span = 0;
  double work_percent = 0;  // of the program's work T1
  double span_percent = 0;  // of the program's span
};

// Fails when the profile has no work/span data or was recorded without --strands.
Result<std::vector<StrandRow>> StrandRows(const profile::Profile& profile);

// Columns: work (default), span, count, function, start, end. Numbers largest first.
Status SortStrands(std::vector<StrandRow>* rows, const std::string& column);

std::string RenderStrandsText(const std::vector<StrandRow>& rows, const std::string& unit);
// An array of objects with the keys function, start_point, start_file, start_line,
// end_point, end_file, end_line, count, work_on_work, span_on_work, work_on_span,
// span_on_span, work_percent, span_percent.
std::string RenderStrandsJson(const std::vector<StrandRow>& rows);
std::string RenderStrandsCsv(const std::vector<StrandRow>& rows);

}  // namespace cilkprof::views
