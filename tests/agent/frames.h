// Test helpers: split a byte stream of agent frames and parse each with the generated
// protobuf classes. Two forms: what the agent writes to a socket or spill file (the
// stream's magic, then frames of u32 LE length, u32 LE CRC32C, message; see
// agent/src/stream_format.h), and what its encoders return before the transport seals
// them (frames of u32 LE length, message).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "cilkprof/common/crc32c.h"
#include "cilkprof/wire.pb.h"

namespace cilkprof::agent::testing {

inline constexpr char kTestStreamMagic[8] = {'\x89', 'C', 'P', 'W', 'I', 'R', 'E', '2'};

inline uint32_t TestLoadLe32(const std::string& bytes, size_t pos) {
  return static_cast<uint8_t>(bytes[pos]) | static_cast<uint8_t>(bytes[pos + 1]) << 8 |
         static_cast<uint8_t>(bytes[pos + 2]) << 16 |
         static_cast<uint32_t>(static_cast<uint8_t>(bytes[pos + 3])) << 24;
}

// Parses every complete frame of `bytes`: a sealed stream when it starts with the
// magic (each checksum verified), else unsealed encoder output. Sets *error (if given)
// and stops at the first bad frame; a trailing partial frame is an error too.
inline std::vector<wire::AgentMessage> ParseFrames(const std::string& bytes,
                                                   std::string* error = nullptr) {
  std::vector<wire::AgentMessage> out;
  const bool sealed = bytes.size() >= sizeof kTestStreamMagic &&
                      std::memcmp(bytes.data(), kTestStreamMagic, sizeof kTestStreamMagic) == 0;
  const size_t header = sealed ? 8 : 4;
  size_t pos = sealed ? sizeof kTestStreamMagic : 0;
  while (pos < bytes.size()) {
    if (bytes.size() - pos < header) {
      if (error) *error = "truncated frame header";
      break;
    }
    const uint32_t n = TestLoadLe32(bytes, pos);
    if (bytes.size() - pos - header < n) {
      if (error) *error = "truncated frame";
      break;
    }
    if (sealed) {
      const uint32_t crc =
          crc32c::Extend(crc32c::Compute(bytes.data() + pos, 4), bytes.data() + pos + header, n);
      if (crc != TestLoadLe32(bytes, pos + 4)) {
        if (error) *error = "checksum mismatch at byte " + std::to_string(pos);
        break;
      }
    }
    wire::AgentMessage message;
    if (!message.ParseFromArray(bytes.data() + pos + header, static_cast<int>(n))) {
      if (error) *error = "frame does not parse";
      break;
    }
    out.push_back(std::move(message));
    pos += header + n;
  }
  return out;
}

}  // namespace cilkprof::agent::testing
