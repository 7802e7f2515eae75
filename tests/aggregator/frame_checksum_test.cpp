// Frame checksums (issue 12, row 7): every damaged byte of a stream or spill file is
// detected and reported with its offset, never merged silently; streams of the first
// format (no magic, no checksums) are still read, with a warning at import.
#include <gtest/gtest.h>

#include <fstream>
#include <random>

#include "cilkprof/aggregator/import.h"
#include "cilkprof/common/crc32c.h"
#include "fake_agent.h"
#include "temp_dir.h"

namespace cilkprof::aggregator {
namespace {

using namespace testing;  // NOLINT: the builders

void Spit(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// Decodes a whole stream: the messages, and whether it ended cleanly.
struct Decoded {
  std::vector<std::string> messages;
  Status end;
};
Decoded DecodeStream(const std::string& bytes) {
  FrameDecoder decoder;
  Decoded out;
  decoder.Feed(bytes);
  wire::AgentMessage m;
  while (decoder.Next(&m)) out.messages.push_back(m.SerializeAsString());
  out.end = decoder.Finish();
  return out;
}

TEST(Crc32cTest, MatchesTheStandardCheckValueWithAndWithoutTheHardwarePath) {
  EXPECT_EQ(crc32c::Compute("123456789", 9), 0xE3069283u);
  EXPECT_EQ(crc32c::Compute("", 0), 0u);
  // 32 zero bytes: RFC 3720, B.4.
  const std::string zeros(32, '\0');
  EXPECT_EQ(crc32c::Compute(zeros.data(), zeros.size()), 0x8A9136AAu);
  // Extend in pieces of every size gives the same, and so does the portable table
  // path the hardware path must agree with.
  std::string text;
  for (int i = 0; i < 1000; ++i) text.push_back(static_cast<char>(i * 131 + 7));
  const uint32_t whole = crc32c::Compute(text.data(), text.size());
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  EXPECT_EQ(~crc32c::detail::ExtendPortable(~0u, bytes, text.size()), whole);
  for (size_t cut = 0; cut <= text.size(); cut += 37) {
    EXPECT_EQ(crc32c::Extend(crc32c::Compute(text.data(), cut), text.data() + cut, text.size() - cut),
              whole);
  }
}

TEST(FrameChecksumTest, StreamStartsWithTheMagicAndDecodesWithChecksums) {
  const auto stream = SyntheticAgentStream(11, 1, 4, 2);
  const std::string bytes = Frames(stream);
  ASSERT_EQ(bytes.substr(0, kStreamMagic.size()), std::string(kStreamMagic));
  FrameDecoder decoder;
  ASSERT_TRUE(decoder.Feed(bytes));
  wire::AgentMessage m;
  size_t n = 0;
  while (decoder.Next(&m)) ++n;
  EXPECT_EQ(n, stream.size());
  EXPECT_TRUE(decoder.Finish().ok());
  EXPECT_FALSE(decoder.legacy_format());
  EXPECT_EQ(decoder.bytes_decoded(), bytes.size());
}

// Every byte of a stream, changed in every one of 8 ways: the decoder never returns
// all the original frames as if nothing happened, and never a changed message.
TEST(FrameChecksumTest, EveryDamagedByteOfAStreamIsDetected) {
  const auto stream = SyntheticAgentStream(12, 2, 3, 2);
  const std::string bytes = Frames(stream);
  const Decoded clean = DecodeStream(bytes);
  ASSERT_TRUE(clean.end.ok());
  for (size_t at = 0; at < bytes.size(); ++at) {
    for (unsigned flip : {0x01u, 0x02u, 0x10u, 0x80u, 0xffu, 0x55u, 0x0fu, 0xa0u}) {
      std::string damaged = bytes;
      damaged[at] = static_cast<char>(damaged[at] ^ flip);
      const Decoded d = DecodeStream(damaged);
      ASSERT_FALSE(d.end.ok()) << "byte " << at << " ^ " << flip << " went unnoticed";
      // What came out is an unchanged prefix of the real stream.
      ASSERT_LE(d.messages.size(), clean.messages.size());
      for (size_t i = 0; i < d.messages.size(); ++i) {
        ASSERT_EQ(d.messages[i], clean.messages[i]) << "byte " << at << " changed message " << i;
      }
    }
  }
}

TEST(FrameChecksumTest, AChecksumMismatchNamesTheFramesOffset) {
  const auto stream = SyntheticAgentStream(13, 3, 3, 2);
  std::string bytes = Frames({stream[0]});
  const size_t second = bytes.size();
  bytes += FrameBytes({stream[1], stream[2]});
  bytes[second + kFrameHeaderBytes + 3] ^= 0x04;  // in the second frame's payload
  FrameDecoder decoder;
  decoder.Feed(bytes);
  wire::AgentMessage m;
  EXPECT_TRUE(decoder.Next(&m));
  EXPECT_FALSE(decoder.Next(&m));
  EXPECT_NE(decoder.status().message().find("at byte " + std::to_string(second)), std::string::npos)
      << decoder.status().message();
  EXPECT_NE(decoder.status().message().find("damaged"), std::string::npos) << decoder.status().message();
  EXPECT_EQ(decoder.bytes_decoded(), second);
}

TEST(FrameChecksumTest, AnUnknownFormatVersionIsRefusedWithAMessage) {
  std::string bytes(kStreamMagic);
  bytes[7] = '3';
  FrameDecoder decoder;
  EXPECT_FALSE(decoder.Feed(bytes));
  EXPECT_NE(decoder.status().message().find("unknown format version"), std::string::npos)
      << decoder.status().message();
}

TEST(FrameChecksumTest, TheMagicReadAsAnOldLengthExceedsEveryLimit) {
  // What an aggregator of the first format does with a new stream: refuse it.
  uint32_t as_length = 0;
  for (int b = 3; b >= 0; --b) as_length = as_length << 8 | static_cast<unsigned char>(kStreamMagic[b]);
  EXPECT_GT(as_length, kMaxFrameBytes);
}

TEST(FrameChecksumTest, StreamsOfTheFirstFormatAreStillDecoded) {
  const auto stream = SyntheticAgentStream(14, 4, 3, 2);
  std::string bytes;
  for (const auto& m : stream) AppendLegacyFrame(m, &bytes);
  FrameDecoder decoder;
  ASSERT_TRUE(decoder.Feed(bytes));
  wire::AgentMessage m;
  size_t n = 0;
  while (decoder.Next(&m)) ++n;
  EXPECT_EQ(n, stream.size());
  EXPECT_TRUE(decoder.Finish().ok());
  EXPECT_TRUE(decoder.legacy_format());
}

TEST(FrameChecksumImportTest, ASpillOfTheFirstFormatImportsWithAWarning) {
  TempDir dir;
  const auto stream = SyntheticAgentStream(15, 5, 3, 2);
  std::string bytes;
  for (const auto& m : stream) AppendLegacyFrame(m, &bytes);
  Spit(dir.File("old.spill"), bytes);
  auto report = ImportFrameStream(dir.File("old.spill"), dir.File("out.cilkprof"), FakeSymbols());
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_TRUE(report->complete);
  bool warned = false;
  for (const auto& w : report->warnings) warned |= w.find("no checksums") != std::string::npos;
  EXPECT_TRUE(warned);
}

// Row 7 of issue 12: 6 of 20 single-byte flips in a spill imported silently, one with
// a wrong value. Now every one is reported, with the offset where trust ended, and
// the profile holds exactly the messages before the damage.
TEST(FrameChecksumImportTest, TwentyRandomFlipsInASpillAreAllReported) {
  TempDir dir;
  const auto stream = SyntheticAgentStream(16, 6, 12, 3);
  const std::string bytes = Frames(stream);
  std::mt19937 rng(20261125);
  for (int trial = 0; trial < 20; ++trial) {
    std::string damaged = bytes;
    const size_t at = std::uniform_int_distribution<size_t>(0, bytes.size() - 1)(rng);
    const int flip = std::uniform_int_distribution<int>(1, 255)(rng);
    damaged[at] = static_cast<char>(damaged[at] ^ flip);
    const std::string spill = dir.File("flip" + std::to_string(trial) + ".spill");
    Spit(spill, damaged);
    auto report = ImportFrameStream(spill, dir.File("flip" + std::to_string(trial) + ".cilkprof"),
                                    FakeSymbols());
    if (!report.ok()) {
      // The Hello itself was damaged: nothing to import, and the error says why.
      EXPECT_NE(report.status().message().find("not a Cilkprof spill file"), std::string::npos)
          << report.status().message();
      continue;
    }
    EXPECT_FALSE(report->complete) << "flip at byte " << at << " imported silently";
    bool named = false;
    for (const auto& w : report->warnings) named |= w.find("before byte ") != std::string::npos;
    EXPECT_TRUE(named) << "flip at byte " << at << ": no warning names the offset";
    EXPECT_LT(report->messages, stream.size()) << "flip at byte " << at;
  }
}

}  // namespace
}  // namespace cilkprof::aggregator
