// The formats `cilkprof export` writes (docs/USER_GUIDE.md, "Export"), one function
// each, in cli/src/export/<format>.cc; format_table.cc lists them.
//
// An exporter writes the whole file to `out` and returns an error (one message that
// says what to do) when the profile cannot give that format: a metric it does not
// have, no timeline recorded, no work/span. It never writes a partial file the caller
// keeps: the caller writes to a temporary file next to the output and renames it.
// Costs: time and memory proportional to the profile (bench/exports).
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "analysis_input.h"
#include "cilkprof/common/status.h"

namespace cilkprof::cli::exporters {

struct ExportOptions {
  std::string metric;     // "" = the format's default (work, or every metric where the format has several)
  bool inverted = false;  // flame graphs: an icicle of callers (the bottom-up view)
  std::string profile_path;  // for titles and names
};

using ExportFn = std::function<Status(const AnalysisInput& input, const ExportOptions& options, std::ostream& out)>;

struct Format {
  std::string name;         // --format value
  std::string description;  // one line, for --help and errors
  bool binary = false;      // never to a terminal: needs -o
  ExportFn write;
};

// Every format of this build, in the order --help lists them.
const std::vector<Format>& Formats();
const Format* FindFormat(const std::string& name);

// The exporters (one file each).
Status WriteCilkscaleCsv(const AnalysisInput& input, const ExportOptions& options, std::ostream& out);
Status WriteFlameGraphSvg(const AnalysisInput& input, const ExportOptions& options, std::ostream& out);
Status WritePprof(const AnalysisInput& input, const ExportOptions& options, std::ostream& out);
Status WriteFolded(const AnalysisInput& input, const ExportOptions& options, std::ostream& out);
Status WriteChromeTrace(const AnalysisInput& input, const ExportOptions& options, std::ostream& out);
Status WriteSpeedscope(const AnalysisInput& input, const ExportOptions& options, std::ostream& out);

}  // namespace cilkprof::cli::exporters
