// Length-prefixed framing of wire.AgentMessage on a byte stream (see wire.proto).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "cilkprof/common/status.h"
#include "cilkprof/wire.pb.h"

namespace cilkprof::aggregator {

inline constexpr uint32_t kProtocolVersion = 1;
inline constexpr size_t kMaxFrameBytes = 64u << 20;

// Appends one frame (4-byte little-endian length, then the message) to `out`.
void AppendFrame(const wire::AgentMessage& message, std::string* out);

// Incremental decoder: feed bytes as they arrive, take messages out. After an error
// the decoder stays failed; the caller drops the connection with status().message().
// Errors: a zero length, a length above max_frame_bytes (detected as soon as the 4
// header bytes are in, before the payload is buffered), a payload that does not parse.
// The buffer holds at most one frame plus the bytes fed with it, provided the caller
// drains Next() after each Feed().
class FrameDecoder {
 public:
  // max_frame_bytes is capped at INT32_MAX (protobuf's parse limit).
  explicit FrameDecoder(size_t max_frame_bytes = kMaxFrameBytes);
  // Appends bytes. Returns false once the stream is known to be bad.
  bool Feed(std::string_view bytes);
  // Takes the next complete message; false when none is complete yet (or on error).
  bool Next(wire::AgentMessage* message);
  const Status& status() const { return status_; }
  // At end of stream: OK if no partial frame is pending, else "truncated".
  Status Finish() const;
  // Messages taken out by Next() so far.
  uint64_t frames_decoded() const { return frames_decoded_; }

 private:
  size_t max_frame_bytes_;
  std::string buffer_;
  size_t consumed_ = 0;
  Status status_;
  uint64_t frames_decoded_ = 0;
};

}  // namespace cilkprof::aggregator
