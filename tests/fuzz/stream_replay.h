// What a connection (or `cilkprof import`) does with a frame stream, for the fuzz
// harnesses: decode, merge until the first error, and say how it ended.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cilkprof/aggregator/session.h"
#include "cilkprof/aggregator/symbol_source.h"

namespace cilkprof::aggregator::fuzzing {

// How a replay ended. Two replays of the same bytes must end alike, however the bytes
// were split.
struct ReplayEnd {
  uint64_t messages = 0;        // messages merged
  uint64_t merged_through = 0;  // stream offset just past the last one
  uint64_t nodes_declared = 0;  // NewNodes in the merged messages
  uint64_t images = 1;          // sessions, when following execs
  std::string session_error;    // the Apply error that stopped merging, or ""
  std::string decoder_error;    // the decoder's error, or Finish()'s at the end, or ""
  bool operator==(const ReplayEnd&) const = default;
};

// What a replay merged: one session, or one per process image when it follows execs.
struct Replay {
  std::vector<std::unique_ptr<Session>> images;  // never empty
  ReplayEnd end;
  Session& last() { return *images.back(); }
};

// Feeds `pieces` in order to a FrameDecoder with the default frame limit, as
// ImportFrameStream does, and merges every message until the first error. With
// `follow_exec`, a Hello right after a Goodbye "exec" starts the next image's session,
// as the next connection of that process does (the server folds the two:
// Session::FoldExecPredecessor); without it, it is the session's error, as in a spill.
Replay ReplayStream(const std::vector<std::string_view>& pieces, bool follow_exec);

// Splits `bytes` into pieces of 1 to 4096 bytes, as a socket may deliver them; the
// sizes are a function of the bytes, so a replay is reproducible.
std::vector<std::string_view> SplitLikeASocket(std::string_view bytes);

// Knows no symbol: every location becomes "??" (build_profile.cpp).
class NullSymbolSource final : public SymbolSource {
 public:
  std::vector<profile::SourceFrame> Symbolize(const std::string&, const std::string&,
                                              uint64_t) override {
    return {};
  }
};

// "" when equal, else a short description of the first difference.
std::string CompareEnds(const ReplayEnd& a, const ReplayEnd& b);

}  // namespace cilkprof::aggregator::fuzzing
