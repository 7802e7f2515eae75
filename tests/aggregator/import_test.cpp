// Spill files: a complete stream, a truncated one, a damaged one, a non-spill file.
#include <gtest/gtest.h>
#include <google/protobuf/util/message_differencer.h>

#include <fstream>

#include "cilkprof/aggregator/import.h"
#include "cilkprof/aggregator/profile_io.h"
#include "fake_agent.h"
#include "profile_paths.h"
#include "temp_dir.h"

namespace cilkprof::aggregator {
namespace {

using namespace testing;  // NOLINT: the builders

void Spit(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

TEST(ImportTest, CompleteSpillFileBecomesTheSameProfileAsALiveConnection) {
  TempDir dir;
  const auto stream = SyntheticAgentStream(77, 1);
  Spit(dir.File("spill"), Frames(stream));
  auto report = ImportFrameStream(dir.File("spill"), dir.File("out.cilkprof"), FakeSymbols());
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_TRUE(report->complete);
  EXPECT_EQ(report->messages, stream.size());
  EXPECT_EQ(report->process.pid, 77u);
  EXPECT_EQ(report->threads, 3u);
  auto read = ReadProfileFile(dir.File("out.cilkprof"));
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(*read, ExpectedProfile(stream)));
}

TEST(ImportTest, TruncatedSpillFileKeepsEveryCompleteMessageAndWarns) {
  TempDir dir;
  const auto stream = SyntheticAgentStream(78, 2, 6, 2, /*goodbye=*/false);
  const std::string complete = Frames(stream);
  std::string extra;
  AppendFrame(SyntheticAgentStream(78, 3, 1, 1)[1], &extra);
  Spit(dir.File("spill"), complete + extra.substr(0, extra.size() - 3));  // killed mid-write
  auto report = ImportFrameStream(dir.File("spill"), dir.File("out.cilkprof"), FakeSymbols());
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_FALSE(report->complete);
  EXPECT_EQ(report->messages, stream.size());
  bool warned = false;
  for (const auto& w : report->warnings) warned |= w.find("truncated") != std::string::npos;
  EXPECT_TRUE(warned);
  auto read = ReadProfileFile(dir.File("out.cilkprof"));
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(PathsOf(*read), PathsOf(ExpectedProfile(stream)));
  EXPECT_EQ(read->process().end_reason(), "connection lost");
  bool stored = false;
  for (const auto& w : read->process().warnings()) stored |= w.find("incomplete") != std::string::npos;
  EXPECT_TRUE(stored);
}

TEST(ImportTest, DamagedMessageInTheMiddleKeepsWhatCameBefore) {
  TempDir dir;
  const auto stream = SyntheticAgentStream(79, 4, 4, 2, false);
  const std::vector<wire::AgentMessage> head(stream.begin(), stream.begin() + 3);
  std::string bytes = Frames(head);
  bytes += std::string("\x05\x00\x00\x00\xff\xff\xff\xff\xff", 9);  // damaged
  bytes += FrameBytes({stream[3]});
  Spit(dir.File("spill"), bytes);
  auto report = ImportFrameStream(dir.File("spill"), dir.File("out.cilkprof"), FakeSymbols());
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->messages, 3u);
  auto read = ReadProfileFile(dir.File("out.cilkprof"));
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(PathsOf(*read), PathsOf(ExpectedProfile(head)));
}

TEST(ImportTest, FilesThatAreNotSpillFilesAreErrors) {
  TempDir dir;
  Spit(dir.File("text"), "hello, world\n");
  auto text = ImportFrameStream(dir.File("text"), dir.File("out.cilkprof"), FakeSymbols());
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.status().message().find("not a Cilkprof spill file"), std::string::npos)
      << text.status().message();
  Spit(dir.File("empty"), "");
  EXPECT_FALSE(ImportFrameStream(dir.File("empty"), dir.File("out.cilkprof"), FakeSymbols()).ok());
  auto missing = ImportFrameStream(dir.File("absent"), dir.File("out.cilkprof"), FakeSymbols());
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("cannot open"), std::string::npos);
  EXPECT_FALSE(std::ifstream(dir.File("out.cilkprof")).good());
}

}  // namespace
}  // namespace cilkprof::aggregator
