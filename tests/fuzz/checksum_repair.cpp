// Repairs of the checksums that guard the wire stream and the profile file, for the
// fuzzers' mutators (see fuzz_harness.h).
#include <cstring>

#include "cilkprof/aggregator/framing.h"
#include "cilkprof/aggregator/profile_io.h"
#include "fuzz_harness.h"

namespace cilkprof::aggregator::fuzzing {
namespace {

uint64_t LoadLittleEndian(const uint8_t* p, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value |= uint64_t{p[i]} << (8 * i);
  return value;
}

void StoreLittleEndian(uint64_t value, int bytes, uint8_t* p) {
  for (int i = 0; i < bytes; ++i) p[i] = static_cast<uint8_t>((value >> (8 * i)) & 0xff);
}

}  // namespace

size_t RepairFrameChecksums(uint8_t* data, size_t size) {
  if (size < kStreamMagic.size() || std::memcmp(data, kStreamMagic.data(), kStreamMagic.size()) != 0) {
    return 0;
  }
  size_t repaired = 0;
  size_t at = kStreamMagic.size();
  while (size - at >= kFrameHeaderBytes) {
    const uint64_t length = LoadLittleEndian(data + at, 4);
    // A zero or overlong length is the decoder's business: nothing after it is read.
    if (length == 0 || length > size - at - kFrameHeaderBytes) break;
    const uint8_t* payload = data + at + kFrameHeaderBytes;
    const std::string_view bytes(reinterpret_cast<const char*>(payload), length);
    StoreLittleEndian(FrameChecksum(bytes), 4, data + at + 4);
    at += kFrameHeaderBytes + length;
    ++repaired;
  }
  return repaired;
}

bool RepairProfileHeader(uint8_t* data, size_t size) {
  // Header: magic (8), version (4), payload length (8), FNV-1a of the payload (8).
  if (size < kProfileHeaderBytes || std::memcmp(data, "CILKPROF", 8) != 0) return false;
  const std::string_view payload(reinterpret_cast<const char*>(data) + kProfileHeaderBytes,
                                 size - kProfileHeaderBytes);
  StoreLittleEndian(payload.size(), 8, data + 12);
  StoreLittleEndian(Fnv1a64(payload), 8, data + 20);
  return true;
}

}  // namespace cilkprof::aggregator::fuzzing
