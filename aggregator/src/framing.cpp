// The agent's frame stream (see framing.h and wire.proto).
#include "cilkprof/aggregator/framing.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "cilkprof/common/crc32c.h"

namespace cilkprof::aggregator {
namespace {

constexpr size_t kLengthBytes = 4;

uint32_t LoadLittleEndian32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return uint32_t{u[0]} | uint32_t{u[1]} << 8 | uint32_t{u[2]} << 16 | uint32_t{u[3]} << 24;
}

void StoreLittleEndian32(uint32_t value, char* p) {
  for (int b = 0; b < 4; ++b) p[b] = static_cast<char>((value >> (8 * b)) & 0xff);
}

// Appends length (and, unless legacy, checksum) and the serialized message.
void Append(const wire::AgentMessage& message, bool legacy, std::string* out) {
  const size_t size = message.ByteSizeLong();
  const size_t header = legacy ? kLengthBytes : kFrameHeaderBytes;
  const size_t start = out->size();
  out->resize(start + header + size);
  char* p = out->data() + start;
  StoreLittleEndian32(static_cast<uint32_t>(size), p);
  message.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(p + header));
  if (!legacy) {
    StoreLittleEndian32(FrameChecksum(std::string_view(p + header, size)), p + kLengthBytes);
  }
}

}  // namespace

uint32_t FrameChecksum(std::string_view payload) {
  char length[kLengthBytes];
  StoreLittleEndian32(static_cast<uint32_t>(payload.size()), length);
  return crc32c::Extend(crc32c::Compute(length, sizeof length), payload.data(), payload.size());
}

void AppendStreamHeader(std::string* out) { out->append(kStreamMagic); }

void AppendFrame(const wire::AgentMessage& message, std::string* out) { Append(message, false, out); }

void AppendLegacyFrame(const wire::AgentMessage& message, std::string* out) {
  Append(message, true, out);
}

FrameDecoder::FrameDecoder(size_t max_frame_bytes)
    : max_frame_bytes_(std::min<size_t>(max_frame_bytes, std::numeric_limits<int32_t>::max())) {}

// The first four bytes decide: the magic's, or a format-1 length (which the magic's
// can never be: read as a length it exceeds every limit).
bool FrameDecoder::DetectFormat() {
  const size_t available = buffer_.size() - consumed_;
  if (available < kLengthBytes) return false;
  const char* p = buffer_.data() + consumed_;
  if (std::memcmp(p, kStreamMagic.data(), kLengthBytes) != 0) {
    format_ = Format::kLegacy;
    return true;
  }
  if (available < kStreamMagic.size()) return false;
  if (std::memcmp(p, kStreamMagic.data(), kStreamMagic.size()) != 0) {
    status_ = Status::Error(
        "the stream starts with a Cilkprof magic of an unknown format version (bytes 4-7 are not "
        "\"IRE2\"): written by a newer Cilkprof, or damaged at its start");
    return false;
  }
  format_ = Format::kChecksummed;
  consumed_ += kStreamMagic.size();
  return true;
}

bool FrameDecoder::CheckLength(uint32_t length) {
  const uint64_t at = base_offset_ + consumed_;
  if (length == 0) {
    status_ = Status::Error(
        fmt::format("zero-length frame at byte {} (every message is at least 1 byte)", at));
  } else if (length > max_frame_bytes_) {
    status_ = Status::Error(fmt::format(
        "the frame at byte {} claims {} bytes, which exceeds the limit of {} bytes (oversized, "
        "damaged, or not a Cilkprof stream)",
        at, length, max_frame_bytes_));
  }
  return status_.ok();
}

bool FrameDecoder::Feed(std::string_view bytes) {
  if (!status_.ok()) return false;
  // Drop consumed bytes before growing, so the buffer holds at most one frame plus
  // whatever arrived with it.
  if (consumed_ > 0 && (consumed_ == buffer_.size() || consumed_ >= buffer_.size() / 2)) {
    buffer_.erase(0, consumed_);
    base_offset_ += consumed_;
    consumed_ = 0;
  }
  buffer_.append(bytes.data(), bytes.size());
  if (format_ == Format::kUnknown && !DetectFormat()) return status_.ok();
  // Check the pending length now: an oversized one must fail before its payload is
  // buffered.
  if (buffer_.size() - consumed_ >= kLengthBytes) {
    CheckLength(LoadLittleEndian32(buffer_.data() + consumed_));
  }
  return status_.ok();
}

bool FrameDecoder::Next(wire::AgentMessage* message) {
  if (!status_.ok() || format_ == Format::kUnknown) return false;
  const size_t available = buffer_.size() - consumed_;
  if (available < kLengthBytes) return false;
  const char* frame = buffer_.data() + consumed_;
  const uint32_t length = LoadLittleEndian32(frame);
  if (!CheckLength(length)) return false;
  const size_t header = HeaderBytes();
  if (available < header || available - header < length) return false;
  const char* payload = frame + header;
  const uint64_t at = base_offset_ + consumed_;
  if (format_ == Format::kChecksummed) {
    const uint32_t stored = LoadLittleEndian32(frame + kLengthBytes);
    const uint32_t computed = FrameChecksum(std::string_view(payload, length));
    if (stored != computed) {
      status_ = Status::Error(fmt::format(
          "the frame at byte {} ({} bytes) is damaged: its checksum is {:08x} but its content "
          "gives {:08x}",
          at, length, stored, computed));
      return false;
    }
  }
  if (!message->ParseFromArray(payload, static_cast<int>(length))) {
    status_ = Status::Error(fmt::format(
        "the frame at byte {} ({} bytes) does not parse as a wire.AgentMessage (corrupt data or "
        "not a Cilkprof agent)",
        at, length));
    return false;
  }
  consumed_ += header + length;
  ++frames_decoded_;
  return true;
}

Status FrameDecoder::Finish() const {
  if (!status_.ok()) return status_;
  const size_t pending = buffer_.size() - consumed_;
  if (pending == 0) return Status::Ok();
  const uint64_t at = base_offset_ + consumed_;
  if (format_ == Format::kUnknown) {
    return Status::Error(fmt::format(
        "truncated: the stream ended inside its first {} bytes (its magic or first frame header)",
        pending));
  }
  const size_t header = HeaderBytes();
  if (pending < header) {
    return Status::Error(fmt::format(
        "truncated: the stream ended inside the header of the frame at byte {} ({} of {} bytes)", at,
        pending, header));
  }
  const uint32_t length = LoadLittleEndian32(buffer_.data() + consumed_);
  return Status::Error(fmt::format(
      "truncated: the stream ended inside the frame at byte {} ({} of {} payload bytes)", at,
      pending - header, length));
}

}  // namespace cilkprof::aggregator
