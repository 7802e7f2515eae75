// The agent's frame stream: how wire.AgentMessages travel on a socket and sit in a
// spill file (docs/PROFILE_FORMAT.md, "Frame stream"; wire.proto).
//
//   stream = magic frame*
//   magic  = 89 43 50 57 49 52 45 32         ("\x89CPWIRE2": format 2)
//   frame  = u32 LE N | u32 LE CRC32C(the 4 bytes of N, then the payload) | payload
//            (N bytes: one AgentMessage; 1 <= N <= the frame limit)
//
// The checksum makes a damaged spill file or frame an error that names the byte
// offset, never data merged silently. Streams of the first format (no magic, frames
// of u32 N then the payload, no checksum), written by older agents, are still read:
// legacy_format() tells, and `cilkprof import` warns that damage cannot be detected
// in them. The magic's first four bytes, read as a format-1 length, exceed every frame
// limit, so an older aggregator refuses a newer agent with a clear error.
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
inline constexpr std::string_view kStreamMagic{"\x89" "CPWIRE2", 8};
inline constexpr size_t kFrameHeaderBytes = 8;  // length, checksum

// Appends the stream's magic: once, before the first frame.
void AppendStreamHeader(std::string* out);
// Appends one frame (length, checksum, message) to `out`.
void AppendFrame(const wire::AgentMessage& message, std::string* out);
// Appends one frame of the first format (length, message; no magic before the
// stream, no checksum): for tests of old streams.
void AppendLegacyFrame(const wire::AgentMessage& message, std::string* out);
// The checksum a frame of `payload` carries.
uint32_t FrameChecksum(std::string_view payload);

// Incremental decoder: feed bytes as they arrive, take messages out. After an error
// the decoder stays failed; the caller drops the connection with status().message().
// Errors, each naming the byte offset of the frame in the stream: a zero length, a
// length above max_frame_bytes (detected as soon as the length is in, before the
// payload is buffered), a checksum that does not match, a payload that does not
// parse, a magic of an unknown format version.
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
  // Stream offset just past the last message taken out (where a reader's trust ends).
  uint64_t bytes_decoded() const { return base_offset_ + consumed_; }
  // The stream has no magic: frames without checksums (an older agent).
  bool legacy_format() const { return format_ == Format::kLegacy; }

 private:
  enum class Format : uint8_t { kUnknown, kChecksummed, kLegacy };
  bool DetectFormat();
  size_t HeaderBytes() const { return format_ == Format::kLegacy ? 4 : kFrameHeaderBytes; }
  bool CheckLength(uint32_t length);

  size_t max_frame_bytes_;
  std::string buffer_;
  size_t consumed_ = 0;
  uint64_t base_offset_ = 0;  // stream offset of buffer_[0]
  Format format_ = Format::kUnknown;
  Status status_;
  uint64_t frames_decoded_ = 0;
};

}  // namespace cilkprof::aggregator
