// The profile reader harness (see fuzz_harness.h).
#include <fmt/format.h>

#include <vector>

#include "cilkprof/aggregator/profile_io.h"
#include "deterministic_bytes.h"
#include "fuzz_harness.h"
#include "quiet_logs.h"
#include "memory_file.h"

namespace cilkprof::aggregator::fuzzing {

std::string CheckProfileReader(std::string_view file) {
  QuietLibraryLogs();
  static MemoryFile memory;
  memory.Write(file);
  const std::string& path = memory.path();

  const auto whole = DecodeProfileFile(path, file);
  const auto mapped = ReadProfileFile(path);
  if (mapped.ok() != whole.ok() || mapped.status().message() != whole.status().message()) {
    return "ReadProfileFile(path) and DecodeProfileFile disagree: '" + mapped.status().message() +
           "' versus '" + whole.status().message() + "'";
  }
  std::vector<profile::Node> nodes;
  bool in_order = true;
  const auto streamed = ReadProfileFile(path, [&](uint32_t index, const profile::Node& node) {
    in_order &= index == nodes.size();
    nodes.push_back(node);
  });
  if (!in_order) return "the streaming reader handed out nodes out of order";
  if (streamed.ok() != whole.ok() || streamed.status().message() != whole.status().message()) {
    return "the streaming and the whole-file reader disagree: streaming '" +
           streamed.status().message() + "', whole '" + whole.status().message() + "'";
  }
  if (!whole.ok()) return "";

  profile::Profile rebuilt = *streamed;
  if (rebuilt.nodes_size() != 0) return "the streaming reader kept nodes in its profile";
  for (const auto& node : nodes) *rebuilt.add_nodes() = node;
  if (DeterministicBytes(rebuilt) != DeterministicBytes(*whole)) {
    return fmt::format("the streaming and the whole-file reader accept different profiles ({} and {} nodes)",
                       nodes.size(), whole->nodes_size());
  }
  // What was accepted is written back as it was read.
  auto again = DecodeProfileFile("re-encoded", EncodeProfileFile(*whole));
  if (!again.ok()) return "an accepted profile, encoded again, is refused: " + again.status().message();
  if (DeterministicBytes(*again) != DeterministicBytes(*whole)) {
    return "an accepted profile, encoded again, reads back different";
  }
  return "";
}

}  // namespace cilkprof::aggregator::fuzzing
