// Deterministic fuzzing of the aggregator's input path: thousands of random and
// mutated streams through FrameDecoder + Session, and hostile connections against a
// live server while a well-formed agent streams its profile. Seeded: every run
// exercises the same cases, and a failure names its case.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <google/protobuf/util/message_differencer.h>

#include <fstream>
#include <thread>

#include "cilkprof/aggregator/output_naming.h"
#include "cilkprof/aggregator/profile_io.h"
#include "cilkprof/aggregator/server.h"
#include "cilkprof/aggregator/session.h"
#include "fake_agent.h"
#include "fuzz_harness.h"
#include "profile_paths.h"
#include "stream_mutator.h"
#include "temp_dir.h"

namespace cilkprof::aggregator {
namespace {

using fuzzing::StreamMutator;
using namespace testing;  // NOLINT: the builders

constexpr size_t kMaxFrame = 1 << 16;

struct Outcome {
  bool had_hello = false;
  bool failed = false;
  profile::Profile profile;
};

// What a connection does with the bytes: decode, merge until the first error, build.
Outcome Drive(const std::vector<std::string>& chunks) {
  FrameDecoder decoder(kMaxFrame);
  Session session;
  Outcome outcome;
  wire::AgentMessage message;
  size_t nodes_sent = 0;
  for (const std::string& chunk : chunks) {
    decoder.Feed(chunk);
    while (!outcome.failed && decoder.Next(&message)) {
      if (message.has_delta()) {
        for (const auto& t : message.delta().threads()) nodes_sent += t.nodes_size();
      }
      outcome.failed = !session.Apply(message).ok();
    }
    if (outcome.failed || !decoder.status().ok()) break;
  }
  outcome.failed |= !decoder.Finish().ok();
  outcome.had_hello = session.has_hello();
  if (session.has_hello()) {
    FakeSymbolSource symbols;
    outcome.profile = session.BuildProfile(symbols, 1);
    EXPECT_LE(static_cast<size_t>(outcome.profile.nodes_size()), nodes_sent + 1);
    // Whatever was merged must make a file the reader accepts.
    auto reread = DecodeProfileFile("fuzz", EncodeProfileFile(outcome.profile));
    EXPECT_TRUE(reread.ok()) << reread.status().message();
  }
  return outcome;
}

TEST(AggregatorFuzzTest, DecoderAndSessionSurviveHostileStreams) {
  StreamMutator mutator(0xC11C9F0F);
  int with_hello = 0, failed = 0;
  for (int i = 0; i < 3000; ++i) {
    SCOPED_TRACE("case " + std::to_string(i));
    const auto valid = SyntheticAgentStream(100 + i, static_cast<uint32_t>(i),
                                            1 + static_cast<int>(mutator.Below(6)),
                                            1 + static_cast<int>(mutator.Below(3)));
    std::string bytes;
    switch (i % 3) {
      case 0: bytes = mutator.RandomBytes(2048); break;
      case 1: bytes = mutator.MutateBytes(Frames(valid)); break;
      case 2: bytes = mutator.MutateMessages(valid); break;
    }
    const Outcome outcome = Drive(mutator.Chunks(bytes));
    with_hello += outcome.had_hello;
    failed += outcome.failed;
    if (HasFailure()) return;  // one reported case is enough to debug
  }
  // The mutations reach deep: many streams got past Hello, many were refused.
  EXPECT_GT(with_hello, 500);
  EXPECT_GT(failed, 1500);
}

TEST(AggregatorFuzzTest, GarbageAfterAValidPrefixKeepsThePrefixExactly) {
  StreamMutator mutator(0xBADF00D);
  for (int i = 0; i < 500; ++i) {
    SCOPED_TRACE("case " + std::to_string(i));
    const auto stream = SyntheticAgentStream(7, static_cast<uint32_t>(i), 6, 3, false);
    const size_t keep = 1 + mutator.Below(stream.size());
    const std::vector<wire::AgentMessage> prefix(stream.begin(),
                                                 stream.begin() + static_cast<long>(keep));
    std::string bytes = Frames(prefix);
    // A frame whose payload cannot parse (0xff starts an invalid tag), then noise.
    const uint32_t n = 1 + static_cast<uint32_t>(mutator.Below(64));
    for (int b = 0; b < 4; ++b) bytes.push_back(static_cast<char>((n >> (8 * b)) & 0xff));
    bytes.append(n, '\xff');
    bytes += mutator.RandomBytes(256);
    const Outcome outcome = Drive(mutator.Chunks(bytes));
    ASSERT_TRUE(outcome.had_hello);
    EXPECT_TRUE(outcome.failed);
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(outcome.profile,
                                                                   ExpectedProfile(prefix, 1)));
  }
}

TEST(AggregatorFuzzTest, LiveServerKeepsTheRealProfileUnderHostileConnections) {
  TempDir dir;
  AggregatorOptions options;
  options.unix_socket_path = dir.File("fuzz.sock");
  options.max_frame_bytes = kMaxFrame;
  options.output_path = [d = dir.path()](const ProcessKey& key) { return UniqueProfilePath(d, key); };
  auto started = Aggregator::Start(std::move(options), FakeSymbols());
  ASSERT_TRUE(started.ok()) << started.status().message();
  Aggregator& server = **started;

  constexpr uint32_t kRealPid = 424242;
  const auto real = SyntheticAgentStream(kRealPid, 99, 40, 4);
  std::thread agent([&] {
    ClientSocket client(dir.File("fuzz.sock"));
    ASSERT_TRUE(client.connected());
    StreamMutator chunker(1);
    for (const std::string& chunk : chunker.Chunks(Frames(real))) {
      ASSERT_TRUE(client.Send(chunk));
    }
  });
  constexpr int kHostile = 300;
  StreamMutator mutator(0x5EED);
  for (int i = 0; i < kHostile; ++i) {
    const auto base = SyntheticAgentStream(10 + i, static_cast<uint32_t>(i), 3, 2);
    std::string bytes;
    switch (i % 3) {
      case 0: bytes = mutator.RandomBytes(4096); break;
      case 1: bytes = mutator.MutateBytes(Frames(base)); break;
      case 2: bytes = mutator.MutateMessages(base); break;
    }
    ClientSocket hostile(dir.File("fuzz.sock"));
    ASSERT_TRUE(hostile.connected()) << i;
    for (const std::string& chunk : mutator.Chunks(bytes)) {
      if (!hostile.Send(chunk)) break;  // dropped mid-send: expected
    }
  }
  agent.join();

  const auto written = server.Finish(std::chrono::milliseconds(60000));
  EXPECT_EQ(server.connections_accepted(), uint64_t{kHostile} + 1);
  EXPECT_GT(server.connections_dropped(), uint64_t{kHostile} / 2);
  const WrittenProfile* mine = nullptr;
  for (const auto& w : written) {
    EXPECT_TRUE(w.status.ok()) << w.status.message();
    if (w.process.pid == kRealPid) {
      EXPECT_EQ(mine, nullptr) << "two profiles for the real agent";
      mine = &w;
    }
  }
  ASSERT_NE(mine, nullptr);
  auto read = ReadProfileFile(mine->path);
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(*read, ExpectedProfile(real)));
  EXPECT_EQ(read->process().end_reason(), "exit");
  EXPECT_EQ(read->totals().connections_dropped(), 0u);
}

// The crashes the libFuzzer targets found (docs/FUZZING.md, "Crashes found"), each
// pinned by the case that shows it. Their inputs are in the corpora too
// (corpus/<target>/regression-*), where fuzz_corpus_replay_test runs them.

TEST(SessionCrashes, ANodeDeclaredAgainUnderAnUnknownParentIsRefused) {
  // Declaring a node again is allowed under its first parent (spills re-declare);
  // under a parent never declared, Apply threw std::out_of_range, which stopped the
  // daemon's I/O thread and with it every connection.
  Session session;
  ASSERT_TRUE(session.Apply(Hello(1)).ok());
  wire::AgentMessage first;
  AddModule(first.mutable_delta(), 1, "/bin/x");
  AddNode(AddThread(first.mutable_delta(), 10, 0), 1, 0, 1, 0x10);
  ASSERT_TRUE(session.Apply(first).ok());
  wire::AgentMessage again;
  AddNode(AddThread(again.mutable_delta(), 10, 0), 1, 7, 1, 0x10);
  Status status;
  EXPECT_NO_THROW(status = session.Apply(again));
  EXPECT_THAT(status.message(), ::testing::HasSubstr("defines node 1 twice, with different parents"));
  // The same bytes on the wire: refused, the first Delta kept.
  EXPECT_EQ(fuzzing::CheckWireStream(Frames({Hello(1), first, again})), "");
}

// A profile file of `payload`, with a right header.
std::string ProfileFileOf(const std::string& payload) {
  std::string file("CILKPROF");
  auto put = [&](uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i) file.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
  };
  put(kProfileFormatVersion, 4);
  put(payload.size(), 8);
  put(Fnv1a64(payload), 8);
  return file + payload;
}

// What the whole-file reader and the streaming reader say of `file`.
std::pair<Status, Status> ReadBothWays(const std::string& file) {
  TempDir dir;
  const std::string path = dir.File("read.cilkprof");
  std::ofstream(path, std::ios::binary) << file;
  const auto whole = ReadProfileFile(path);
  const auto streamed = ReadProfileFile(path, [](uint32_t, const profile::Node&) {});
  return {whole.status(), streamed.status()};
}

std::string SamplePayload() {
  std::string payload;
  ExpectedProfile(SyntheticAgentStream(1, 1, 3, 2)).SerializeToString(&payload);
  return payload;
}

// Profile.nodes (field 6) holding bytes that do not parse as a Node: a tag cut short.
const std::string kUnparsableNode("\x32\x02\xff\xff", 4);

TEST(ProfileReaderCrashes, AnUnparsableNodeBeatsABrokenTableInBothReaders) {
  profile::Profile broken = ExpectedProfile(SyntheticAgentStream(1, 1, 3, 2));
  broken.mutable_locations(1)->set_module(99);
  std::string payload;
  broken.SerializeToString(&payload);
  const auto [whole, streamed] = ReadBothWays(ProfileFileOf(payload + kUnparsableNode));
  EXPECT_THAT(whole.message(), ::testing::HasSubstr("does not parse as a profile"));
  EXPECT_EQ(streamed.message(), whole.message());
}

TEST(ProfileReaderCrashes, AnUnparsableNodeBeatsAnEarlierBrokenNodeInBothReaders) {
  profile::Profile broken = ExpectedProfile(SyntheticAgentStream(1, 1, 3, 2));
  broken.mutable_nodes(1)->set_location(1000);
  std::string payload;
  broken.SerializeToString(&payload);
  const auto [whole, streamed] = ReadBothWays(ProfileFileOf(payload + kUnparsableNode));
  EXPECT_THAT(whole.message(), ::testing::HasSubstr("does not parse as a profile"));
  EXPECT_EQ(streamed.message(), whole.message());
}

TEST(ProfileReaderCrashes, ANodesTagOfAnotherWireTypeIsNoNodeInEitherReader) {
  // Field 6 (Profile.nodes) as a fixed64: protobuf keeps it as an unknown field.
  const std::string not_a_node = std::string("\x31", 1) + std::string(8, '\0');
  const std::string file = ProfileFileOf(SamplePayload() + not_a_node);
  const auto [whole, streamed] = ReadBothWays(file);
  EXPECT_TRUE(whole.ok()) << whole.message();
  EXPECT_EQ(streamed.message(), whole.message());
  EXPECT_EQ(fuzzing::CheckProfileReader(file), "");
}

TEST(ProfileReaderCrashes, EncodingsOnlyProtobufKnowsAreReadAsProtobufReadsThem) {
  // Each appended to a good payload; protobuf's parser, which the whole-file reader
  // uses, accepts some and refuses others, and the streaming reader must agree.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"an unknown group (field 14)", std::string("\x73\x08\x01\x74", 4)},
      {"nested unknown groups", std::string("\x73\x7b\x7c\x74", 4)},
      {"an unterminated group", std::string("\x73\x08\x01", 3)},
      {"a group ended by another number", std::string("\x73\x7c", 2)},
      {"an end of group at the top", std::string("\x74", 1)},
      {"a node tag in 2 bytes", std::string("\xb2\x00\x00", 3)},
      {"a node length in 2 bytes", std::string("\x32\x80\x00", 3)},
      {"a tag above 32 bits", std::string("\x88\x80\x80\x80\x10\x01", 6)},
      {"a group inside a node", std::string("\x32\x02\x73\x74", 4)},
      // Inside the profile one level deeper than alone: past protobuf's limit of 100.
      {"100 nested groups inside a node",
       "\x32\xc8\x01" + std::string(100, '\x73') + std::string(100, '\x74')},
  };
  for (const auto& [what, bytes] : cases) {
    SCOPED_TRACE(what);
    const std::string file = ProfileFileOf(SamplePayload() + bytes);
    const auto [whole, streamed] = ReadBothWays(file);
    EXPECT_EQ(streamed.message(), whole.message());
    EXPECT_EQ(fuzzing::CheckProfileReader(file), "");
  }
}

}  // namespace
}  // namespace cilkprof::aggregator
