// The wire stream harness (see fuzz_harness.h).
#include <fmt/format.h>

#include "cilkprof/aggregator/framing.h"
#include "cilkprof/aggregator/profile_io.h"
#include "deterministic_bytes.h"
#include "fuzz_harness.h"
#include "quiet_logs.h"
#include "stream_replay.h"

namespace cilkprof::aggregator::fuzzing {
namespace {

// Builds the profile of `session` and checks that the reader takes it back unchanged.
std::string CheckBuiltProfile(const Session& session, uint64_t nodes_declared) {
  NullSymbolSource symbols;
  profile::Profile profile = session.BuildProfile(symbols, 1);
  if (static_cast<uint64_t>(profile.nodes_size()) > nodes_declared + 1) {
    return fmt::format("the profile has {} nodes, but the stream declared only {} (plus the root)",
                       profile.nodes_size(), nodes_declared);
  }
  auto reread = DecodeProfileFile("fuzz", EncodeProfileFile(profile));
  if (!reread.ok()) return "the built profile is refused by the reader: " + reread.status().message();
  profile.set_format_version(kProfileFormatVersion);
  if (DeterministicBytes(*reread) != DeterministicBytes(profile)) {
    return "the built profile reads back different";
  }
  return "";
}

}  // namespace

std::string CheckWireStream(std::string_view stream) {
  QuietLibraryLogs();
  Replay whole = ReplayStream({stream}, true);
  const Replay split = ReplayStream(SplitLikeASocket(stream), true);
  if (std::string diff = CompareEnds(whole.end, split.end); !diff.empty()) {
    return "fed whole and fed in pieces, the stream decodes differently: " + diff;
  }
  for (size_t i = 0; i < whole.images.size(); ++i) {
    if (whole.images[i]->merged_nodes() != split.images[i]->merged_nodes()) {
      return fmt::format("fed whole, image {} has {} merged nodes; fed in pieces, {}", i,
                         whole.images[i]->merged_nodes(), split.images[i]->merged_nodes());
    }
  }
  if (!whole.images.front()->has_hello()) return "";

  // What the server does at the end: a connection dropped for bad data says why in its
  // profile; the images of a process that exec'd are folded into one profile, or
  // written apart when they cannot share one.
  const ReplayEnd& end = whole.end;
  if (!end.session_error.empty() || !end.decoder_error.empty()) {
    whole.last().MarkDropped(end.session_error.empty() ? end.decoder_error : end.session_error);
  }
  Session* folded = whole.images.front().get();
  for (size_t i = 1; i < whole.images.size(); ++i) {
    Session* next = whole.images[i].get();
    if (!next->FoldExecPredecessor(*folded).ok()) {
      if (std::string failure = CheckBuiltProfile(*folded, end.nodes_declared); !failure.empty()) {
        return failure;
      }
    }
    folded = next;
  }
  (void)folded->RecordedNothing();  // the server asks before writing: run it under the sanitizers
  return CheckBuiltProfile(*folded, end.nodes_declared);
}

}  // namespace cilkprof::aggregator::fuzzing
