// Hostile clients against a real in-process aggregator (issue 12, row 5), on the Unix
// socket and loopback TCP only, bounded in count: while they flood Hello-and-
// disconnect, hold frames half sent (slowloris), claim huge frames, send garbage, open
// many connections and knock on TCP without the token, a well-behaved agent in a
// process of its own sends its profile, and it arrives complete. The hostile clients'
// files stay within the per-client limit and the frames buffered within the memory
// budget, by the server's own accounting. Every wait is for a state the server
// reports; no assertion depends on timing.
#include <gtest/gtest.h>
#include <google/protobuf/util/message_differencer.h>

#include <atomic>
#include <random>
#include <thread>

#include "cilkprof/aggregator/profile_io.h"
#include "server_fixture.h"

namespace cilkprof::aggregator {
namespace {

using namespace testing;  // NOLINT: the builders
using google::protobuf::util::MessageDifferencer;

constexpr size_t kBudget = 4u << 20;
constexpr uint32_t kProfilesPerClient = 5;
constexpr uint32_t kConnectionsPerClient = 16;
constexpr uint32_t kGoodPid = 777777;
// Hostile pids claimed in Hellos: the flood's on the Unix socket and over TCP.
constexpr uint32_t kUnixFloodPid = 100000;
constexpr uint32_t kTcpFloodPid = 200000;
constexpr uint32_t kFloodMax = 3000;  // connections per flood, at most
constexpr uint32_t kFloodMin = 100;   // before the flood may stop

std::string Header(uint32_t length) {
  std::string out(kStreamMagic);
  for (int b = 0; b < 4; ++b) out.push_back(static_cast<char>((length >> (8 * b)) & 0xff));
  out.append(4, '\0');  // a checksum the payload never gets to match
  return out;
}

class HostileClientsTest : public ServerFixture {};

TEST_F(HostileClientsTest, AWellBehavedAgentIsServedInFullWhileHostileClientsRun) {
  AggregatorOptions options = Options();
  options.tcp_endpoint = "127.0.0.1:0";
  options.tcp_secret_file = dir_.File("secret");
  ASSERT_TRUE(WriteSecretFile(options.tcp_secret_file));
  options.memory_budget_bytes = kBudget;
  options.max_frame_bytes = 1 << 20;
  options.max_connections_per_client = kConnectionsPerClient;
  options.max_profiles_per_client = kProfilesPerClient;
  options.max_tcp_connections_per_address = 2000;
  auto server = Start(options);
  ASSERT_TRUE(server);
  const uint16_t port = server->tcp_port();

  // 1. Slowloris: three frames of 512 KiB announced, 100 bytes sent, then nothing.
  constexpr uint32_t kSlowFrame = 512 * 1024;
  std::vector<std::unique_ptr<ClientSocket>> held;
  for (int i = 0; i < 3; ++i) {
    held.push_back(std::make_unique<ClientSocket>(socket_path_));
    ASSERT_TRUE(held.back()->Send(Header(kSlowFrame) + std::string(100, 'x')));
  }
  ASSERT_TRUE(WaitUntil([&] {
    return server->stats().buffered_frame_bytes == 3 * (kSlowFrame + kFrameHeaderBytes);
  }));

  // 2. Many connections from one process: the per-client cap admits 16 in all.
  for (int i = 0; i < 40; ++i) {
    held.push_back(std::make_unique<ClientSocket>(socket_path_));
    ASSERT_TRUE(held.back()->connected());
  }
  ASSERT_TRUE(WaitUntil([&] { return server->stats().refused_connection_limit == 40 + 3 - kConnectionsPerClient; }));
  EXPECT_EQ(server->connections_open(), kConnectionsPerClient);
  held.resize(3 + 3);  // keep the slowloris and three idle ones, to the end
  ASSERT_TRUE(WaitUntil([&] { return server->connections_open() == 6; }));

  // 3. Floods, running until the well-behaved agent has its profile.
  std::atomic<bool> stop{false};
  std::atomic<uint32_t> unix_flood{0}, tcp_flood{0};
  auto keep_going = [&](const std::atomic<uint32_t>& done) {
    return done < kFloodMax && (done < kFloodMin || !stop);
  };
  std::vector<std::thread> hostile;
  hostile.emplace_back([&] {  // Hello and disconnect, on the Unix socket
    while (keep_going(unix_flood)) {
      ClientSocket client(socket_path_);
      client.Send(Frames({Hello(kUnixFloodPid + unix_flood)}));
      ++unix_flood;
    }
  });
  hostile.emplace_back([&] {  // the same with the token, over TCP
    while (keep_going(tcp_flood)) {
      ClientSocket client(ConnectTcp(port));
      client.Send(AuthLine() + Frames({Hello(kTcpFloodPid + tcp_flood)}));
      ++tcp_flood;
    }
  });
  hostile.emplace_back([&] {  // huge, zero and over-budget lengths, garbage, no token
    std::mt19937 rng(12);
    for (int i = 0; i < 60; ++i) {
      std::string bytes;
      switch (i % 6) {
        case 0: bytes = Header(0xfffffff0u); break;
        case 1: bytes = std::string("\xff\xff\xff\x7f", 4); break;  // first format, 2 GiB
        case 2: bytes = Header(0); break;
        case 3: bytes = Header(900 * 1024) + std::string(900 * 1024, 'g'); break;  // bad checksum
        case 4:
          for (int k = 0; k < 4096; ++k) bytes.push_back(static_cast<char>(rng()));
          break;
        case 5: bytes = Frames({Hello(999)}); break;  // TCP, no token
      }
      auto client = i % 6 == 5 ? std::make_unique<ClientSocket>(ConnectTcp(port))
                               : std::make_unique<ClientSocket>(socket_path_);
      client->Send(bytes);
    }
  });

  // 4. The well-behaved agent, in a process of its own, in small pieces.
  ASSERT_TRUE(WaitUntil([&] { return unix_flood >= 50 && tcp_flood >= 50; }));
  const auto good = SyntheticAgentStream(kGoodPid, 77, 30, 4);
  ASSERT_EQ(SendFromChildProcess(Frames(good)), 0);
  ASSERT_TRUE(WaitUntil([&] { return Written(kGoodPid); }));
  stop = true;
  for (std::thread& t : hostile) t.join();
  const AggregatorStats during = server->stats();
  held.clear();
  const auto written = server->Finish(std::chrono::milliseconds(60000));
  const AggregatorStats stats = server->stats();

  // The agent's profile is complete.
  const WrittenProfile* mine = ForPid(written, kGoodPid);
  ASSERT_NE(mine, nullptr);
  auto read = ReadProfileFile(mine->path);
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_TRUE(MessageDifferencer::Equals(*read, ExpectedProfile(good)));
  EXPECT_EQ(read->process().end_reason(), "exit");
  EXPECT_EQ(read->totals().connections_dropped(), 0u);

  // The hostile clients wrote at most their limit: one client on the Unix socket (this
  // process), one over TCP (127.0.0.1).
  uint32_t unix_files = 0, tcp_files = 0, other_files = 0;
  for (const auto& w : written) {
    if (w.process.pid == kGoodPid) continue;
    const bool unix_flood_pid = w.process.pid >= kUnixFloodPid && w.process.pid < kUnixFloodPid + kFloodMax;
    const bool tcp_flood_pid = w.process.pid >= kTcpFloodPid && w.process.pid < kTcpFloodPid + kFloodMax;
    (unix_flood_pid ? unix_files : tcp_flood_pid ? tcp_files : other_files)++;
  }
  EXPECT_LE(unix_files, kProfilesPerClient);
  EXPECT_LE(tcp_files, kProfilesPerClient);
  EXPECT_EQ(other_files, 0u);
  EXPECT_EQ(FilesInOutputDirectory(), written.size());
  EXPECT_LE(written.size(), 1 + 2 * kProfilesPerClient);

  // Memory stayed within the budget, and nothing is left reserved.
  EXPECT_LE(during.peak_buffered_frame_bytes, kBudget);
  EXPECT_LE(stats.peak_buffered_frame_bytes, kBudget);
  EXPECT_GE(stats.peak_buffered_frame_bytes, 3 * (kSlowFrame + kFrameHeaderBytes));
  EXPECT_EQ(stats.buffered_frame_bytes, 0u);

  // Every hostile connection is accounted for: refused, dropped, or ended with its
  // profile written or counted over the limit.
  EXPECT_GE(stats.refused_authentication + stats.refused_connection_limit + stats.refused_tcp_rate,
            10u);  // no token
  EXPECT_GE(stats.connections_dropped + stats.refused_connection_limit, 50u);     // bad data
  EXPECT_EQ(stats.connections_accepted, 3 + 40 + unix_flood + tcp_flood + 60 + 1);
}

}  // namespace
}  // namespace cilkprof::aggregator
