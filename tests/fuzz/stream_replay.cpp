// Replays of frame streams for the fuzz harnesses (see stream_replay.h).
#include "stream_replay.h"

#include <fmt/format.h>

#include "cilkprof/aggregator/framing.h"
#include "cilkprof/common/crc32c.h"

namespace cilkprof::aggregator::fuzzing {

Replay ReplayStream(const std::vector<std::string_view>& pieces, bool follow_exec) {
  FrameDecoder decoder;
  Replay replay;
  replay.images.push_back(std::make_unique<Session>());
  ReplayEnd& end = replay.end;
  wire::AgentMessage message;
  for (std::string_view piece : pieces) {
    decoder.Feed(piece);
    while (decoder.Next(&message)) {
      if (follow_exec && message.has_hello() && replay.last().ended_by_exec()) {
        replay.images.push_back(std::make_unique<Session>());
        ++end.images;
      }
      if (Status status = replay.last().Apply(message); !status.ok()) {
        end.session_error = status.message();
        return replay;
      }
      ++end.messages;
      end.merged_through = decoder.bytes_decoded();
      if (message.has_delta()) {
        for (const auto& thread : message.delta().threads()) end.nodes_declared += thread.nodes_size();
      }
    }
    if (!decoder.status().ok()) break;
  }
  if (Status finish = decoder.Finish(); !finish.ok()) end.decoder_error = finish.message();
  return replay;
}

std::vector<std::string_view> SplitLikeASocket(std::string_view bytes) {
  uint32_t state = crc32c::Compute(bytes.data(), bytes.size()) | 1;
  std::vector<std::string_view> pieces;
  for (size_t at = 0; at < bytes.size();) {
    state ^= state << 13;  // xorshift32
    state ^= state >> 17;
    state ^= state << 5;
    // Mostly small pieces, which split headers and payloads; sometimes large ones.
    const size_t limit = (state >> 28) == 0 ? 4096 : 16;
    const size_t n = std::min<size_t>(1 + state % limit, bytes.size() - at);
    pieces.push_back(bytes.substr(at, n));
    at += n;
  }
  return pieces;
}

std::string CompareEnds(const ReplayEnd& a, const ReplayEnd& b) {
  if (a == b) return "";
  auto show = [](const ReplayEnd& e) {
    return fmt::format(
        "{} messages through byte {} in {} images, {} nodes, session error '{}', decoder error '{}'",
        e.messages, e.merged_through, e.images, e.nodes_declared, e.session_error, e.decoder_error);
  };
  return show(a) + " versus " + show(b);
}

}  // namespace cilkprof::aggregator::fuzzing
