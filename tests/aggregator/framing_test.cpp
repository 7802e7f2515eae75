// FrameDecoder and AppendFrame: split feeds, zero length, oversized, truncated, bad payload
// (checksums and streams of the first format: frame_checksum_test.cpp).
#include <gtest/gtest.h>

#include "cilkprof/aggregator/framing.h"
#include "wire_builders.h"

namespace cilkprof::aggregator {
namespace {

using testing::Frames;
using testing::Hello;

std::vector<wire::AgentMessage> SampleStream() {
  wire::AgentMessage delta;
  testing::AddModule(delta.mutable_delta(), 1, "/bin/app");
  auto* t = testing::AddThread(delta.mutable_delta(), 100, 0, "main");
  testing::AddNode(t, 1, 0, 1, 0x10);
  testing::AddMetrics(t, 1, {1, 1000});
  return {Hello(42), delta, testing::Goodbye()};
}

std::vector<std::string> DecodeAll(FrameDecoder& decoder) {
  std::vector<std::string> out;
  wire::AgentMessage m;
  while (decoder.Next(&m)) out.push_back(m.SerializeAsString());
  return out;
}

TEST(FramingTest, AppendFrameWritesLengthThenChecksumThenMessage) {
  const wire::AgentMessage hello = Hello(7);
  std::string out = "x";
  AppendFrame(hello, &out);
  const std::string payload = hello.SerializeAsString();
  ASSERT_EQ(out.size(), 1 + kFrameHeaderBytes + payload.size());
  EXPECT_EQ(static_cast<unsigned char>(out[1]), payload.size() & 0xff);
  EXPECT_EQ(static_cast<unsigned char>(out[2]), (payload.size() >> 8) & 0xff);
  EXPECT_EQ(out[3], 0);
  EXPECT_EQ(out[4], 0);
  const uint32_t checksum = FrameChecksum(payload);
  for (int b = 0; b < 4; ++b) {
    EXPECT_EQ(static_cast<unsigned char>(out[5 + b]), (checksum >> (8 * b)) & 0xff);
  }
  EXPECT_EQ(out.substr(1 + kFrameHeaderBytes), payload);
}

TEST(FramingTest, DecodesAStreamFedWhole) {
  const auto messages = SampleStream();
  FrameDecoder decoder;
  ASSERT_TRUE(decoder.Feed(Frames(messages)));
  const auto decoded = DecodeAll(decoder);
  ASSERT_EQ(decoded.size(), messages.size());
  for (size_t i = 0; i < messages.size(); ++i) EXPECT_EQ(decoded[i], messages[i].SerializeAsString());
  EXPECT_TRUE(decoder.Finish().ok());
  EXPECT_EQ(decoder.frames_decoded(), messages.size());
}

TEST(FramingTest, DecodesTheSameStreamFedInEverySplit) {
  const auto messages = SampleStream();
  const std::string bytes = Frames(messages);
  // Every chunk size from 1 byte up, so frame and header boundaries fall everywhere.
  for (size_t chunk = 1; chunk <= bytes.size(); ++chunk) {
    FrameDecoder decoder;
    std::vector<std::string> decoded;
    for (size_t at = 0; at < bytes.size(); at += chunk) {
      ASSERT_TRUE(decoder.Feed(std::string_view(bytes).substr(at, chunk)));
      for (auto& m : DecodeAll(decoder)) decoded.push_back(m);
    }
    ASSERT_EQ(decoded.size(), messages.size()) << "chunk " << chunk;
    EXPECT_TRUE(decoder.Finish().ok()) << "chunk " << chunk;
  }
}

TEST(FramingTest, ZeroLengthFrameFailsAndStaysFailed) {
  std::string bytes = Frames({Hello(1)});
  bytes.append(4, '\0');
  wire::AgentMessage m;
  // The first frame was fine; the zero length is reported when reached.
  FrameDecoder fresh;
  fresh.Feed(bytes);
  EXPECT_TRUE(fresh.Next(&m));
  EXPECT_FALSE(fresh.Next(&m));
  EXPECT_FALSE(fresh.status().ok());
  EXPECT_NE(fresh.status().message().find("zero-length"), std::string::npos);
  EXPECT_FALSE(fresh.Feed(Frames({Hello(2)})));
  EXPECT_FALSE(fresh.Next(&m));
  EXPECT_FALSE(fresh.Finish().ok());
}

TEST(FramingTest, ZeroLengthAsFirstFrameFailsOnFeed) {
  FrameDecoder decoder;
  EXPECT_FALSE(decoder.Feed(std::string_view("\0\0\0\0", 4)));
  EXPECT_NE(decoder.status().message().find("zero-length"), std::string::npos);
}

TEST(FramingTest, OversizedLengthFailsBeforeThePayloadArrives) {
  FrameDecoder decoder(1024);
  const char header[4] = {0x01, 0x04, 0x00, 0x00};  // 1025 bytes
  EXPECT_FALSE(decoder.Feed(std::string_view(header, 4)));
  EXPECT_NE(decoder.status().message().find("exceeds the limit of 1024"), std::string::npos)
      << decoder.status().message();
}

TEST(FramingTest, OversizedHeaderSplitAcrossFeedsIsDetected) {
  FrameDecoder decoder(1024);
  EXPECT_TRUE(decoder.Feed(std::string_view("\xff\xff", 2)));
  EXPECT_FALSE(decoder.Feed(std::string_view("\xff\x7f", 2)));
  EXPECT_FALSE(decoder.status().ok());
}

TEST(FramingTest, FrameExactlyAtTheLimitIsAccepted) {
  const wire::AgentMessage hello = Hello(9);
  FrameDecoder decoder(hello.ByteSizeLong());
  ASSERT_TRUE(decoder.Feed(Frames({hello})));
  wire::AgentMessage m;
  EXPECT_TRUE(decoder.Next(&m));
  EXPECT_EQ(m.hello().pid(), 9u);
}

TEST(FramingTest, TruncatedStreamIsReportedAtFinish) {
  const std::string bytes = Frames(SampleStream());
  for (size_t cut : {size_t{1}, size_t{3}, size_t{4}, size_t{10}, bytes.size() - 1}) {
    FrameDecoder decoder;
    ASSERT_TRUE(decoder.Feed(bytes.substr(0, cut)));
    DecodeAll(decoder);
    const Status end = decoder.Finish();
    ASSERT_FALSE(end.ok()) << "cut at " << cut;
    EXPECT_NE(end.message().find("truncated"), std::string::npos) << end.message();
  }
}

TEST(FramingTest, PayloadThatDoesNotParseFails) {
  std::string bytes("\x03\x00\x00\x00\xff\xff\xff", 7);  // field 31, wire type 7: invalid
  FrameDecoder decoder;
  ASSERT_TRUE(decoder.Feed(bytes));
  wire::AgentMessage m;
  EXPECT_FALSE(decoder.Next(&m));
  EXPECT_NE(decoder.status().message().find("does not parse"), std::string::npos);
}

}  // namespace
}  // namespace cilkprof::aggregator
