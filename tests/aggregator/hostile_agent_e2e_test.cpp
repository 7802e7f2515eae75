// A real agent under hostile clients (issue 12, row 5): agent_e2e_program runs with
// libcilkprof_agent.so preloaded against an in-process aggregator while other clients
// flood Hello-and-disconnect, hold half-sent frames and send garbage on its Unix
// socket. The program's profile arrives complete (its Goodbye, every thread, no
// dropped data) while the flood still runs; the flood's files stay within the
// per-client limit and the buffered frames within the budget. Bounded in count, Unix
// socket only; the waits are for states, not for time.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "cilkprof/aggregator/profile_io.h"
#include "e2e_support.h"
#include "server_fixture.h"

namespace cilkprof::aggregator {
namespace {

using namespace testing;  // NOLINT: the builders

constexpr size_t kBudget = 4u << 20;
constexpr uint32_t kProfilesPerClient = 5;
constexpr uint32_t kFloodPid = 300000;
constexpr uint32_t kFloodMax = 20000;

std::string AnnounceFrame(uint32_t length) {
  std::string out(kStreamMagic);
  for (int b = 0; b < 4; ++b) out.push_back(static_cast<char>((length >> (8 * b)) & 0xff));
  return out + std::string(4, '\0');
}

class HostileAgentTest : public ServerFixture {};

TEST_F(HostileAgentTest, ARealAgentsProfileArrivesCompleteDuringAFlood) {
  AggregatorOptions options = Options();
  options.memory_budget_bytes = kBudget;
  options.max_connections_per_client = 32;
  options.max_profiles_per_client = kProfilesPerClient;
  auto server = Start(options);
  ASSERT_TRUE(server);

  // Half-sent frames that hold half the budget until the end.
  std::vector<std::unique_ptr<ClientSocket>> slowloris;
  for (int i = 0; i < 4; ++i) {
    slowloris.push_back(std::make_unique<ClientSocket>(socket_path_));
    ASSERT_TRUE(slowloris.back()->Send(AnnounceFrame(512 * 1024) + "partial"));
  }
  std::atomic<bool> stop{false};
  std::atomic<uint32_t> flooded{0};
  std::thread flood([&] {
    for (uint32_t i = 0; i < kFloodMax && !stop; ++i) {
      ClientSocket client(socket_path_);
      client.Send(i % 10 == 9 ? std::string(1000, '\xff') : Frames({Hello(kFloodPid + i)}));
      ++flooded;
    }
  });
  ASSERT_TRUE(WaitUntil([&] { return flooded >= 100; }));

  const agent::testing::RunResult run = agent::testing::RunUnderAgent(
      CILKPROF_E2E_PROGRAM, {"threads"}, {{"CILKPROF_SOCKET", socket_path_}}, dir_.path());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const uint32_t pid = static_cast<uint32_t>(run.pid);
  ASSERT_TRUE(WaitUntil([&] { return Written(pid); })) << "the program's profile never came";
  const bool flood_was_running = flooded < kFloodMax;
  stop = true;
  flood.join();
  slowloris.clear();
  const auto written = server->Finish(std::chrono::milliseconds(60000));
  const AggregatorStats stats = server->stats();

  EXPECT_TRUE(flood_was_running) << "the flood ended before the profile came";
  const WrittenProfile* mine = ForPid(written, pid);
  ASSERT_NE(mine, nullptr);
  ASSERT_TRUE(mine->status.ok()) << mine->status.message();
  auto read = ReadProfileFile(mine->path);
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(read->process().end_reason(), "exit");
  EXPECT_EQ(read->totals().connections_dropped(), 0u);
  EXPECT_GT(read->totals().samples(), 0u);
  // Every thread the program reported is in the profile.
  const auto facts = agent::testing::Facts(run.out);
  for (const char* tid : {"tid0", "tid1"}) {
    ASSERT_EQ(facts.count(tid), 1u) << run.out;
    bool found = false;
    for (const auto& thread : read->threads()) found |= thread.tid() == facts.at(tid);
    EXPECT_TRUE(found) << tid << " missing from the profile";
  }

  uint32_t flood_files = 0;
  for (const auto& w : written) flood_files += w.process.pid >= kFloodPid ? 1 : 0;
  EXPECT_LE(flood_files, kProfilesPerClient);
  EXPECT_LE(stats.peak_buffered_frame_bytes, kBudget);
  EXPECT_EQ(stats.buffered_frame_bytes, 0u);
}

}  // namespace
}  // namespace cilkprof::aggregator
