// Converting a spill file into a profile.
//
// When the agent cannot reach an aggregator it writes the same framed stream it would
// have sent (framing.h: Hello, Deltas, Goodbye) to a local spill file. Importing
// replays that stream through the same Session as a live connection and writes the
// profile. A spill file cut short (the program was killed mid-write) yields a profile
// of every complete message before the cut, plus a warning; so does a damaged frame
// in the middle (its checksum does not match: everything before it is kept, nothing
// after it, and the warning names the byte offset where trust ended). A file with no
// valid Hello at its start is an error. Files of the first frame format (no
// checksums, framing.h) are read with a warning that damage cannot be detected.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cilkprof/aggregator/server.h"
#include "cilkprof/aggregator/symbol_source.h"
#include "cilkprof/common/status.h"

namespace cilkprof::aggregator {

struct ImportReport {
  ProcessKey process;            // sequence is 0
  std::string path;              // the profile written
  profile::Totals totals;
  uint32_t threads = 0;
  uint64_t messages = 0;         // messages merged
  bool complete = false;         // the stream ended with Goodbye and nothing after it
  std::vector<std::string> warnings;  // the profile's ProcessInfo.warnings (agent, truncation, symbols)
};

// Reads `spill_path`, merges it, symbolizes with `symbols` and writes `output_path`
// with WriteProfileFile (atomic; replaces an existing file: the caller chose the name).
Result<ImportReport> ImportFrameStream(const std::string& spill_path,
                                       const std::string& output_path,
                                       const SymbolSourceFactory& symbols);

// The same with the libdw symbolizer (defined in cilkprof_aggregator).
Result<ImportReport> ImportFrameStream(const std::string& spill_path,
                                       const std::string& output_path);

}  // namespace cilkprof::aggregator
