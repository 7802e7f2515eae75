// The server's FrameMeter against the FrameDecoder (issue 12, row 5): fed the same
// stream in the pieces the meter asks for, a frame completes for the meter exactly
// when the decoder gives a message, and the meter knows each frame's size before its
// payload is read. Both stream formats: with the magic and checksums, and the first.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "fake_agent.h"
#include "frame_meter.h"

namespace cilkprof::aggregator {
namespace {

using internal::FrameMeter;
using namespace testing;  // NOLINT: the builders

std::string LegacyStream(const std::vector<wire::AgentMessage>& messages) {
  std::string out;
  for (const auto& m : messages) AppendLegacyFrame(m, &out);
  return out;
}

// Walks `stream` at the meter's boundaries, in random pieces no longer than them.
void CheckAgreement(const std::string& stream, size_t messages, std::mt19937* rng) {
  FrameMeter meter;
  FrameDecoder decoder;
  size_t at = 0, complete = 0;
  while (at < stream.size()) {
    const uint64_t boundary = meter.bytes_to_boundary();
    ASSERT_GT(boundary, 0u);
    const size_t piece = 1 + (*rng)() % std::min<uint64_t>(boundary, stream.size() - at);
    const bool header_known = meter.header_complete();
    const uint64_t frame_bytes = meter.frame_bytes();
    const bool frame_done = meter.Advance(std::string_view(stream).substr(at, piece));
    at += piece;
    ASSERT_TRUE(decoder.Feed(std::string_view(stream).substr(at - piece, piece)))
        << decoder.status().message();
    wire::AgentMessage message;
    const bool decoded = decoder.Next(&message);
    ASSERT_EQ(frame_done, decoded) << "at byte " << at;
    if (decoded) {
      ASSERT_TRUE(header_known) << "a frame completed before its size was known";
      ++complete;
      // The frame's size, known before its payload, is what the decoder consumed.
      EXPECT_EQ(decoder.bytes_decoded(), at);
      EXPECT_LE(frame_bytes, at);
      EXPECT_FALSE(decoder.Next(&message));
    }
  }
  EXPECT_EQ(complete, messages);
  EXPECT_TRUE(decoder.Finish().ok());
}

TEST(FrameMeterTest, AgreesWithTheDecoderOnBothFormats) {
  std::mt19937 rng(12);
  for (uint32_t seed = 0; seed < 40; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const auto messages = SyntheticAgentStream(100 + seed, seed, 1 + seed % 7, 1 + seed % 3);
    CheckAgreement(Frames(messages), messages.size(), &rng);
    CheckAgreement(LegacyStream(messages), messages.size(), &rng);
  }
}

TEST(FrameMeterTest, KnowsAFramesSizeFromItsHeaderAlone) {
  for (bool legacy : {false, true}) {
    wire::AgentMessage hello = Hello(7);
    std::string stream;
    if (!legacy) AppendStreamHeader(&stream);
    const size_t header_at = stream.size();
    legacy ? AppendLegacyFrame(hello, &stream) : AppendFrame(hello, &stream);
    const size_t header = legacy ? 4 : kFrameHeaderBytes;
    FrameMeter meter;
    size_t at = 0;
    while (at < header_at + header) {
      EXPECT_FALSE(meter.header_complete());
      const size_t piece = meter.bytes_to_boundary();
      EXPECT_FALSE(meter.Advance(std::string_view(stream).substr(at, piece)));
      at += piece;
    }
    ASSERT_EQ(at, header_at + header) << "the meter read past the header";
    ASSERT_TRUE(meter.header_complete());
    EXPECT_EQ(meter.frame_bytes(), stream.size() - header_at);
    EXPECT_EQ(meter.bytes_to_boundary(), hello.ByteSizeLong());
  }
}

}  // namespace
}  // namespace cilkprof::aggregator
