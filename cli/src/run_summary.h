// The summary printed on stderr once a run's or an attach's profiles are written
// (`cilkprof run`, `cilkprof attach`): the headline, the main profile's summary, work
// and span, further profiles, and where each one is.
#pragma once

#include <string>
#include <vector>

#include "cilkprof/aggregator/server.h"
#include "output_naming.h"
#include "progress.h"

namespace cilkprof::cli {

// "the profile of pid 12 (/bin/prog) could not be written ...": one message for each
// profile that is not where it was asked; `writer_failures` adds those the
// collector's writer logged (written elsewhere, lost) to those only we know about
// (an -o file created or changed while the program ran).
std::vector<std::string> WriteProblems(const std::vector<aggregator::WrittenProfile>& written,
                                       const ProfileNaming& naming, bool writer_failures);

// `headline`: "the program exited with status 0", "detached from process 123 after 10.0 s".
// `workspan_note`: how work and span were measured when the profile does not say it,
// or why they were not ("" when nothing to add).
void PrintRunSummary(std::vector<aggregator::WrittenProfile> written, const std::string& headline,
                     const ProfileNaming& naming, const std::string& workspan_note, Progress& progress);

}  // namespace cilkprof::cli
