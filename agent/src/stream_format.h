// The frame stream the agent writes to the aggregator's socket and to spill files
// (docs/PROFILE_FORMAT.md, "Frame stream"; the aggregator's reader is
// aggregator/include/cilkprof/aggregator/framing.h, which must agree):
//
//   stream = magic frame*
//   magic  = "\x89CPWIRE2" (8 bytes)
//   frame  = u32 LE N | u32 LE CRC32C(the 4 bytes of N, then the payload) | payload
//
// The message encoders (wire_messages.h, the work/span reporter) produce unsealed
// frames, u32 LE N then the payload; the transport seals them (adds the checksum) as
// it queues them. Everything here is async-signal-safe except SealFrames (allocates).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "cilkprof/common/crc32c.h"

namespace cilkprof::agent {

inline constexpr char kStreamMagic[8] = {'\x89', 'C', 'P', 'W', 'I', 'R', 'E', '2'};
inline constexpr size_t kUnsealedHeaderBytes = 4;  // length
inline constexpr size_t kSealedHeaderBytes = 8;    // length, checksum

inline uint32_t LoadLe32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return uint32_t{u[0]} | uint32_t{u[1]} << 8 | uint32_t{u[2]} << 16 | uint32_t{u[3]} << 24;
}

inline void StoreLe32(uint32_t value, char* p) {
  for (int b = 0; b < 4; ++b) p[b] = static_cast<char>((value >> (8 * b)) & 0xff);
}

// Fills in the header of a sealed frame whose payload of `length` bytes follows it at
// frame + 8. Async-signal-safe.
inline void SealFrameHeader(char* frame, uint32_t length) {
  StoreLe32(length, frame);
  const uint32_t crc = crc32c::Extend(crc32c::Compute(frame, 4), frame + kSealedHeaderBytes, length);
  StoreLe32(crc, frame + 4);
}

// One or more unsealed frames (as the encoders return them, concatenated) -> the
// same frames sealed. Not signal-safe.
inline std::string SealFrames(const std::string& unsealed) {
  std::string out;
  out.reserve(unsealed.size() + unsealed.size() / 64 + 16);
  size_t at = 0;
  while (at + kUnsealedHeaderBytes <= unsealed.size()) {
    const uint32_t length = LoadLe32(unsealed.data() + at);
    if (length > unsealed.size() - at - kUnsealedHeaderBytes) break;  // never happens: our encoders
    const size_t start = out.size();
    out.resize(start + kSealedHeaderBytes);
    out.append(unsealed, at + kUnsealedHeaderBytes, length);
    SealFrameHeader(out.data() + start, length);
    at += kUnsealedHeaderBytes + length;
  }
  return out;
}

}  // namespace cilkprof::agent
