// Length-prefixed framing of wire.AgentMessage (see framing.h and wire.proto).
#include "cilkprof/aggregator/framing.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>

namespace cilkprof::aggregator {
namespace {

constexpr size_t kHeaderBytes = 4;

uint32_t LoadLittleEndian32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return uint32_t{u[0]} | uint32_t{u[1]} << 8 | uint32_t{u[2]} << 16 | uint32_t{u[3]} << 24;
}

}  // namespace

void AppendFrame(const wire::AgentMessage& message, std::string* out) {
  const size_t size = message.ByteSizeLong();
  const size_t start = out->size();
  out->resize(start + kHeaderBytes + size);
  char* p = out->data() + start;
  p[0] = static_cast<char>(size & 0xff);
  p[1] = static_cast<char>((size >> 8) & 0xff);
  p[2] = static_cast<char>((size >> 16) & 0xff);
  p[3] = static_cast<char>((size >> 24) & 0xff);
  message.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(p + kHeaderBytes));
}

FrameDecoder::FrameDecoder(size_t max_frame_bytes)
    : max_frame_bytes_(std::min<size_t>(max_frame_bytes, std::numeric_limits<int32_t>::max())) {}

bool FrameDecoder::Feed(std::string_view bytes) {
  if (!status_.ok()) return false;
  // Drop consumed bytes before growing, so the buffer holds at most one frame plus
  // whatever arrived with it.
  if (consumed_ > 0 && (consumed_ == buffer_.size() || consumed_ >= buffer_.size() / 2)) {
    buffer_.erase(0, consumed_);
    consumed_ = 0;
  }
  buffer_.append(bytes.data(), bytes.size());
  // Check the pending header now: an oversized length must fail before its payload
  // is buffered.
  if (buffer_.size() - consumed_ >= kHeaderBytes) {
    const uint32_t length = LoadLittleEndian32(buffer_.data() + consumed_);
    if (length == 0) {
      status_ = Status::Error("zero-length frame (every message is at least 1 byte)");
    } else if (length > max_frame_bytes_) {
      status_ = Status::Error(fmt::format(
          "frame of {} bytes exceeds the limit of {} bytes (oversized or not a Cilkprof stream)",
          length, max_frame_bytes_));
    }
  }
  return status_.ok();
}

bool FrameDecoder::Next(wire::AgentMessage* message) {
  if (!status_.ok()) return false;
  const size_t available = buffer_.size() - consumed_;
  if (available < kHeaderBytes) return false;
  const uint32_t length = LoadLittleEndian32(buffer_.data() + consumed_);
  if (length == 0) {
    status_ = Status::Error("zero-length frame (every message is at least 1 byte)");
    return false;
  }
  if (length > max_frame_bytes_) {
    status_ = Status::Error(fmt::format(
        "frame of {} bytes exceeds the limit of {} bytes (oversized or not a Cilkprof stream)",
        length, max_frame_bytes_));
    return false;
  }
  if (available - kHeaderBytes < length) return false;
  const char* payload = buffer_.data() + consumed_ + kHeaderBytes;
  if (!message->ParseFromArray(payload, static_cast<int>(length))) {
    status_ = Status::Error(fmt::format(
        "a frame of {} bytes does not parse as a wire.AgentMessage (corrupt data or not a "
        "Cilkprof agent)",
        length));
    return false;
  }
  consumed_ += kHeaderBytes + length;
  ++frames_decoded_;
  return true;
}

Status FrameDecoder::Finish() const {
  if (!status_.ok()) return status_;
  const size_t pending = buffer_.size() - consumed_;
  if (pending == 0) return Status::Ok();
  if (pending < kHeaderBytes) {
    return Status::Error(fmt::format(
        "truncated: the stream ended inside a frame header ({} of 4 bytes)", pending));
  }
  const uint32_t length = LoadLittleEndian32(buffer_.data() + consumed_);
  return Status::Error(fmt::format(
      "truncated: the stream ended inside a frame ({} of {} payload bytes)",
      pending - kHeaderBytes, length));
}

}  // namespace cilkprof::aggregator
