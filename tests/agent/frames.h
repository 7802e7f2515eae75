// Test helpers: split a byte stream of agent frames (uint32 LE length + AgentMessage)
// and parse each with the generated protobuf classes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cilkprof/wire.pb.h"

namespace cilkprof::agent::testing {

// Parses every complete frame of `bytes`. Sets *error (if given) and stops at the first
// bad frame; a trailing partial frame is an error too.
inline std::vector<wire::AgentMessage> ParseFrames(const std::string& bytes,
                                                   std::string* error = nullptr) {
  std::vector<wire::AgentMessage> out;
  size_t pos = 0;
  while (pos < bytes.size()) {
    if (bytes.size() - pos < 4) {
      if (error) *error = "truncated length prefix";
      break;
    }
    const uint32_t n = static_cast<uint8_t>(bytes[pos]) | static_cast<uint8_t>(bytes[pos + 1]) << 8 |
                       static_cast<uint8_t>(bytes[pos + 2]) << 16 |
                       static_cast<uint32_t>(static_cast<uint8_t>(bytes[pos + 3])) << 24;
    pos += 4;
    if (bytes.size() - pos < n) {
      if (error) *error = "truncated frame";
      break;
    }
    wire::AgentMessage message;
    if (!message.ParseFromArray(bytes.data() + pos, static_cast<int>(n))) {
      if (error) *error = "frame does not parse";
      break;
    }
    out.push_back(std::move(message));
    pos += n;
  }
  return out;
}

}  // namespace cilkprof::agent::testing
