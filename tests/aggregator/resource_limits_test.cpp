// What one client may ask of the aggregator (issue 12, row 5): the memory budget for
// buffered frames (a frame that does not fit waits unread; one larger than the budget
// drops its connection; a stalled frame others wait for is dropped), connections per
// client and per uid, profiles per client per window, and the writer taking the
// clients' profiles in turn. Each test waits for states the server reports (its
// counters), never for time to pass.
#include <gtest/gtest.h>
#include <google/protobuf/util/message_differencer.h>

#include <condition_variable>

#include "cilkprof/aggregator/profile_io.h"
#include "server_fixture.h"

namespace cilkprof::aggregator {
namespace {

using namespace testing;  // NOLINT: the builders
using google::protobuf::util::MessageDifferencer;
using std::chrono::milliseconds;

constexpr milliseconds kDrain{60000};
constexpr size_t kBudget = 64 * 1024;

// A Delta whose frame is about `bytes` long (a long thread name).
wire::AgentMessage BigDelta(size_t bytes, uint32_t tid = 5000) {
  wire::AgentMessage m;
  wire::ThreadDelta* t = AddThread(m.mutable_delta(), tid, 0, std::string(bytes, 'n'));
  AddCounters(t, 1);
  return m;
}

std::string FrameOf(const wire::AgentMessage& m) {
  std::string out;
  AppendFrame(m, &out);
  return out;
}

class ResourceLimitsTest : public ServerFixture {
 protected:
  profile::Profile Read(const WrittenProfile& w) {
    auto read = ReadProfileFile(w.path);
    EXPECT_TRUE(read.ok()) << read.status().message();
    return read.ok() ? *read : profile::Profile();
  }
};

// A frame that does not fit waits, unread, until the memory is released; then both
// profiles are complete, and the budget was never exceeded.
TEST_F(ResourceLimitsTest, AFrameThatDoesNotFitWaitsForMemory) {
  AggregatorOptions options = Options();
  options.memory_budget_bytes = kBudget;
  auto server = Start(options);
  ASSERT_TRUE(server);

  const std::vector<wire::AgentMessage> holder_stream{Hello(1), BigDelta(48 * 1024), Goodbye()};
  const std::vector<wire::AgentMessage> waiter_stream{Hello(2), BigDelta(30 * 1024, 5001), Goodbye()};
  const std::string holder_bytes = Frames(holder_stream);
  const std::string hello_part = Frames({holder_stream[0]});
  const size_t big_frame = FrameOf(holder_stream[1]).size();
  const size_t split = hello_part.size() + 1000;  // the big frame's header and 1000 bytes

  ClientSocket holder(socket_path_);
  ASSERT_TRUE(holder.Send(holder_bytes.substr(0, split)));
  ASSERT_TRUE(WaitUntil([&] { return server->stats().buffered_frame_bytes == big_frame; }));

  ClientSocket waiter(socket_path_);
  ASSERT_TRUE(waiter.Send(Frames(waiter_stream)));
  ASSERT_TRUE(WaitUntil([&] { return server->stats().waiting_for_memory == 1; }))
      << "the second frame was read although the budget could not hold it";
  EXPECT_LE(server->stats().buffered_frame_bytes, kBudget);

  ASSERT_TRUE(holder.Send(holder_bytes.substr(split)));
  holder.Close();
  waiter.Close();
  const auto written = server->Finish(kDrain);
  ASSERT_EQ(written.size(), 2u);
  EXPECT_TRUE(MessageDifferencer::Equals(Read(*ForPid(written, 1)), ExpectedProfile(holder_stream)));
  EXPECT_TRUE(MessageDifferencer::Equals(Read(*ForPid(written, 2)), ExpectedProfile(waiter_stream)));
  const AggregatorStats stats = server->stats();
  EXPECT_EQ(stats.connections_dropped, 0u);
  EXPECT_GE(stats.memory_waits, 1u);
  EXPECT_LE(stats.peak_buffered_frame_bytes, kBudget);
  EXPECT_GE(stats.peak_buffered_frame_bytes, big_frame);
  EXPECT_EQ(stats.buffered_frame_bytes, 0u);
}

TEST_F(ResourceLimitsTest, AFrameLargerThanTheBudgetDropsItsConnection) {
  AggregatorOptions options = Options();
  options.memory_budget_bytes = kBudget;
  auto server = Start(options);
  ASSERT_TRUE(server);
  {
    ClientSocket client(socket_path_);
    // Under the frame limit (1 MiB) but over the budget: it could never fit.
    client.Send(Frames({Hello(3), BigDelta(100 * 1024)}));
  }
  const auto written = server->Finish(kDrain);
  ASSERT_EQ(written.size(), 1u);
  const profile::Profile p = Read(written[0]);
  EXPECT_EQ(p.totals().connections_dropped(), 1u);
  bool said_why = false;
  for (const auto& w : p.process().warnings()) said_why |= w.find("memory budget") != std::string::npos;
  EXPECT_TRUE(said_why);
  EXPECT_EQ(server->stats().connections_dropped, 1u);
  EXPECT_LT(server->stats().peak_buffered_frame_bytes, 100 * 1024u) << "reserved memory for it anyway";
}

// A frame that stopped arriving is dropped once another connection waits for the
// memory it holds.
TEST_F(ResourceLimitsTest, AStalledFrameOthersWaitForIsDropped) {
  AggregatorOptions options = Options();
  options.memory_budget_bytes = kBudget;
  options.stall_timeout = milliseconds(50);
  auto server = Start(options);
  ASSERT_TRUE(server);
  const std::vector<wire::AgentMessage> stalled_stream{Hello(4), BigDelta(48 * 1024)};
  const std::string stalled_bytes = Frames(stalled_stream);
  ClientSocket stalled(socket_path_);
  ASSERT_TRUE(stalled.Send(stalled_bytes.substr(0, stalled_bytes.size() - 100)));
  ASSERT_TRUE(WaitUntil([&] { return server->stats().buffered_frame_bytes > 0; }));

  const std::vector<wire::AgentMessage> waiter_stream{Hello(5), BigDelta(30 * 1024, 5001), Goodbye()};
  {
    ClientSocket waiter(socket_path_);
    ASSERT_TRUE(waiter.Send(Frames(waiter_stream)));
  }
  ASSERT_TRUE(WaitUntil([&] { return Written(5); }));
  const auto written = server->Finish(kDrain);
  EXPECT_TRUE(MessageDifferencer::Equals(Read(*ForPid(written, 5)), ExpectedProfile(waiter_stream)));
  const profile::Profile dropped = Read(*ForPid(written, 4));
  EXPECT_EQ(dropped.totals().connections_dropped(), 1u);
  EXPECT_EQ(server->stats().connections_dropped, 1u);
  EXPECT_LE(server->stats().peak_buffered_frame_bytes, kBudget);
}

TEST_F(ResourceLimitsTest, ConnectionsPerClientAndPerUidAreCapped) {
  for (bool per_uid : {false, true}) {
    SCOPED_TRACE(per_uid ? "per uid" : "per client");
    AggregatorOptions options = Options();
    (per_uid ? options.max_connections_per_uid : options.max_connections_per_client) = 3;
    auto server = Start(options);
    ASSERT_TRUE(server);
    std::vector<std::unique_ptr<ClientSocket>> held;
    for (int i = 0; i < 5; ++i) {
      held.push_back(std::make_unique<ClientSocket>(socket_path_));
      ASSERT_TRUE(held.back()->connected());
    }
    ASSERT_TRUE(WaitUntil([&] { return server->stats().refused_connection_limit == 2; }));
    EXPECT_EQ(server->stats().connections_accepted, 5u);
    EXPECT_EQ(server->connections_open(), 3u);
    held.clear();  // all closed: room again
    ASSERT_TRUE(WaitUntil([&] { return server->connections_open() == 0; }));
    {
      ClientSocket agent(socket_path_);
      agent.Send(Frames(SyntheticAgentStream(6, 1)));
    }
    const auto written = server->Finish(kDrain);
    EXPECT_EQ(written.size(), 1u);
    EXPECT_EQ(server->stats().refused_connection_limit, 2u);
    std::filesystem::remove_all(dir_.path());
    std::filesystem::create_directory(dir_.path());
  }
}

// A client that says Hello and disconnects, over and over, writes `limit` files.
TEST_F(ResourceLimitsTest, ProfilesPerClientAreLimitedPerWindow) {
  AggregatorOptions options = Options();
  options.max_profiles_per_client = 5;
  auto server = Start(options);
  ASSERT_TRUE(server);
  constexpr uint32_t kFlood = 50;
  for (uint32_t i = 0; i < kFlood; ++i) {
    ClientSocket client(socket_path_);
    client.Send(Frames({Hello(10000 + i)}));
  }
  // Another client's profile is still written.
  const auto other = SyntheticAgentStream(20000, 7);
  ASSERT_EQ(SendFromChildProcess(Frames(other)), 0);
  const auto written = server->Finish(kDrain);
  EXPECT_EQ(written.size(), 6u);
  EXPECT_EQ(FilesInOutputDirectory(), 6u);
  EXPECT_NE(ForPid(written, 20000), nullptr);
  EXPECT_EQ(server->stats().profiles_over_limit, kFlood - 5);
}

// The writer takes the clients in turn: with one client's profiles queued, another
// client's profile is written next, not after all of them.
TEST_F(ResourceLimitsTest, TheWriterServesClientsInTurn) {
  std::mutex gate_mutex;
  std::condition_variable gate_opened;
  bool open = false;
  int built = 0;
  SymbolSourceFactory gated = [&]() -> std::unique_ptr<SymbolSource> {
    std::unique_lock lock(gate_mutex);
    if (built++ == 0) gate_opened.wait(lock, [&] { return open; });  // the writer is busy
    return std::make_unique<FakeSymbolSource>();
  };
  auto server = Start(Options(), gated);
  ASSERT_TRUE(server);
  constexpr uint32_t kFlood = 10;
  for (uint32_t i = 0; i < kFlood; ++i) {
    ClientSocket client(socket_path_);
    client.Send(Frames({Hello(30000 + i), Goodbye()}));
  }
  ASSERT_TRUE(WaitUntil([&] {
    return server->stats().connections_accepted == kFlood && server->connections_open() == 0;
  }));
  const auto mine = SyntheticAgentStream(40000, 9);
  ASSERT_EQ(SendFromChildProcess(Frames(mine)), 0);
  ASSERT_TRUE(WaitUntil([&] {
    return server->stats().connections_accepted == kFlood + 1 && server->connections_open() == 0;
  }));
  {
    std::lock_guard lock(gate_mutex);
    open = true;
  }
  gate_opened.notify_all();
  const auto written = server->Finish(kDrain);
  ASSERT_EQ(written.size(), kFlood + 1);
  // One of the flood was in the writer, one more had its turn queued: then ours. First
  // come, first served, ours would be last.
  size_t position = 0;
  while (position < written.size() && written[position].process.pid != 40000u) ++position;
  EXPECT_LE(position, 2u) << "the other client waited behind the flood";
}

}  // namespace
}  // namespace cilkprof::aggregator
