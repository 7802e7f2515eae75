// Where the frame boundaries of an agent stream fall, so that a connection knows how
// large a frame is before it buffers the frame's payload (internal to the server).
//
// It mirrors the stream format of framing.h and nothing else: the stream's magic
// (format 2, frames with a checksum: headers of kFrameHeaderBytes) or, when the first
// four bytes are not the magic's, frames of the first format (4-byte headers); in both
// a header starts with the payload's length, u32 little-endian. The FrameDecoder still
// validates and parses everything (a wrong magic, a zero or oversized length, a bad
// checksum are its errors). frame_meter_test checks that the two agree on random
// streams of both formats: change them together.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "cilkprof/aggregator/framing.h"

namespace cilkprof::aggregator::internal {

class FrameMeter {
 public:
  static constexpr size_t kLengthBytes = 4;

  // True once the current frame's header is complete: frame_bytes() is known.
  bool header_complete() const { return phase_ == Phase::kPayload; }
  // Header plus payload of the current frame (valid once header_complete()).
  uint64_t frame_bytes() const { return header_bytes_ + uint64_t{length_}; }
  // Bytes of the current frame (or of the magic) seen so far.
  uint64_t frame_bytes_seen() const { return have_; }
  // How many bytes may be read next without crossing a decision point: the rest of the
  // magic or header, or the rest of the payload.
  uint64_t bytes_to_boundary() const {
    switch (phase_) {
      case Phase::kStart:
        return kLengthBytes - have_;
      case Phase::kMagic:
        return kStreamMagic.size() - have_;
      case Phase::kHeader:
        return header_bytes_ - have_;
      case Phase::kPayload:
        return frame_bytes() - have_;
    }
    return 1;
  }

  // Accounts for `bytes`, which must not exceed bytes_to_boundary(). Returns true when
  // they complete a frame; the meter then starts the next one.
  bool Advance(std::string_view bytes) {
    for (char c : bytes) {
      if (have_ < sizeof start_) start_[have_] = c;
      if (phase_ != Phase::kPayload && have_ < kLengthBytes) {
        length_ |= uint32_t{static_cast<unsigned char>(c)} << (8 * have_);
      }
      ++have_;
    }
    switch (phase_) {
      case Phase::kStart:  // the first 4 bytes: the magic's, or the first length
        if (have_ < kLengthBytes) return false;
        if (std::memcmp(start_, kStreamMagic.data(), kLengthBytes) == 0) {
          phase_ = Phase::kMagic;
          return false;
        }
        header_bytes_ = kLengthBytes;  // the first format
        phase_ = Phase::kHeader;
        break;
      case Phase::kMagic:
        if (have_ < kStreamMagic.size()) return false;
        header_bytes_ = kFrameHeaderBytes;
        NextFrame();
        return false;
      case Phase::kHeader:
      case Phase::kPayload:
        break;
    }
    if (phase_ == Phase::kHeader && have_ == header_bytes_) phase_ = Phase::kPayload;
    if (phase_ == Phase::kPayload && have_ == frame_bytes()) {
      NextFrame();
      return true;
    }
    return false;
  }

 private:
  enum class Phase { kStart, kMagic, kHeader, kPayload };

  void NextFrame() {
    phase_ = Phase::kHeader;
    have_ = 0;
    length_ = 0;
  }

  Phase phase_ = Phase::kStart;
  size_t header_bytes_ = 0;
  uint64_t have_ = 0;
  uint32_t length_ = 0;
  char start_[kLengthBytes] = {};
};

}  // namespace cilkprof::aggregator::internal
