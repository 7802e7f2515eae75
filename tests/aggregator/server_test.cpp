// The aggregator server end to end over real sockets: concurrent fake agents, garbage,
// malformed and truncated streams, shutdown, socket handling.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/stat.h>

#include <gtest/gtest.h>
#include <google/protobuf/util/message_differencer.h>

#include <fstream>
#include <mutex>
#include <thread>

#include "cilkprof/aggregator/output_naming.h"
#include "cilkprof/aggregator/profile_io.h"
#include "cilkprof/aggregator/server.h"
#include "fake_agent.h"
#include "peer_helpers.h"
#include "profile_paths.h"
#include "temp_dir.h"

namespace cilkprof::aggregator {
namespace {

using namespace testing;  // NOLINT: the builders
using google::protobuf::util::MessageDifferencer;
using std::chrono::milliseconds;

// Generous upper bound for connections to end after their clients closed; the tests
// never rely on it expiring.
constexpr milliseconds kDrain{60000};

class ServerTest : public ::testing::Test {
 protected:
  std::unique_ptr<Aggregator> StartServer(const std::string& tcp = "") {
    AggregatorOptions options;
    options.unix_socket_path = socket_path_;
    options.tcp_endpoint = tcp;
    if (!tcp.empty()) {  // TCP clients must authenticate (peer_trust_test)
      EXPECT_TRUE(WriteSecretFile(dir_.File("secret")));
      options.tcp_secret_file = dir_.File("secret");
    }
    options.max_frame_bytes = 1 << 20;
    options.output_path = [dir = dir_.path()](const ProcessKey& key) {
      return UniqueProfilePath(dir, key);
    };
    options.on_written = [this](const WrittenProfile& w) {
      std::lock_guard lock(mutex_);
      callbacks_.push_back(w);
    };
    auto started = Aggregator::Start(std::move(options), FakeSymbols());
    EXPECT_TRUE(started.ok()) << started.status().message();
    return started.ok() ? std::move(*started) : nullptr;
  }

  static profile::Profile Read(const WrittenProfile& w) {
    auto read = ReadProfileFile(w.path);
    EXPECT_TRUE(read.ok()) << read.status().message();
    return read.ok() ? *read : profile::Profile();
  }

  static const WrittenProfile* ForPid(const std::vector<WrittenProfile>& all, uint32_t pid) {
    for (const auto& w : all) {
      if (w.process.pid == pid) return &w;
    }
    return nullptr;
  }

  TempDir dir_;
  std::string socket_path_ = dir_.File("agg.sock");
  std::mutex mutex_;
  std::vector<WrittenProfile> callbacks_;
};

TEST_F(ServerTest, TwoConcurrentAgentsAndGarbage) {
  auto server = StartServer();
  ASSERT_TRUE(server);
  struct stat st {};
  ASSERT_EQ(::lstat(socket_path_.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  const auto stream_a = SyntheticAgentStream(1001, 11);
  const auto stream_b = SyntheticAgentStream(1002, 22);
  // Small chunks so the two agents' frames interleave and split everywhere.
  auto agent = [this](const std::vector<wire::AgentMessage>& stream, size_t chunk) {
    ClientSocket client(socket_path_);
    ASSERT_TRUE(client.connected());
    EXPECT_TRUE(client.Send(Frames(stream), chunk));
  };
  std::thread a(agent, std::cref(stream_a), 7);
  std::thread b(agent, std::cref(stream_b), 13);
  {
    ClientSocket garbage(socket_path_);
    ASSERT_TRUE(garbage.connected());
    static constexpr char kJunk[] = "\x10\x00\x00\x00 this is not a protobuf message at all";
    const std::string junk(kJunk, sizeof kJunk - 1);  // a 16-byte frame of text, then more
    garbage.Send(junk);
  }
  a.join();
  b.join();

  const std::vector<WrittenProfile> written = server->Finish(kDrain);
  EXPECT_EQ(server->connections_accepted(), 3u);
  EXPECT_EQ(server->connections_dropped(), 1u);
  ASSERT_EQ(written.size(), 2u);
  for (uint32_t pid : {1001u, 1002u}) {
    const WrittenProfile* w = ForPid(written, pid);
    ASSERT_NE(w, nullptr) << pid;
    ASSERT_TRUE(w->status.ok()) << w->status.message();
    EXPECT_EQ(w->path, dir_.File("synthetic." + std::to_string(pid) + ".cilkprof"));
    const profile::Profile got = Read(*w);
    const profile::Profile want = ExpectedProfile(pid == 1001 ? stream_a : stream_b);
    EXPECT_TRUE(MessageDifferencer::Equals(got, want)) << "pid " << pid;
    EXPECT_EQ(PathsOf(got), PathsOf(want));
    EXPECT_EQ(got.process().end_reason(), "exit");
    EXPECT_EQ(got.totals().connections_dropped(), 0u);
    EXPECT_EQ(w->threads, 3u);
    EXPECT_EQ(w->totals.samples(), want.totals().samples());
  }
  {
    std::lock_guard lock(mutex_);
    EXPECT_EQ(callbacks_.size(), 2u);
  }
  // The socket is gone, and a second Finish returns the same list.
  EXPECT_NE(::lstat(socket_path_.c_str(), &st), 0);
  EXPECT_EQ(server->Finish(milliseconds(0)).size(), 2u);
}

TEST_F(ServerTest, MalformedDeltaDropsOnlyThatConnectionAndKeepsItsEarlierData) {
  auto server = StartServer();
  ASSERT_TRUE(server);
  auto bad_stream = SyntheticAgentStream(2001, 5, 3, 2, /*goodbye=*/false);
  const auto good_stream = SyntheticAgentStream(2002, 6);
  wire::AgentMessage bad;
  AddNode(AddThread(bad.mutable_delta(), 5000, 0), 900, 899, 1, 0x10);  // unknown parent
  std::string bytes = Frames(bad_stream);
  AppendFrame(bad, &bytes);
  wire::AgentMessage after;
  AddMetrics(AddThread(after.mutable_delta(), 5000, 0), 0, {1000, 1000});  // never merged
  AppendFrame(after, &bytes);
  {
    ClientSocket good(socket_path_);
    ClientSocket malformed(socket_path_);
    ASSERT_TRUE(good.connected() && malformed.connected());
    malformed.Send(bytes);
    EXPECT_TRUE(good.Send(Frames(good_stream), 100));
  }
  const auto written = server->Finish(kDrain);
  EXPECT_EQ(server->connections_dropped(), 1u);
  ASSERT_EQ(written.size(), 2u);

  const profile::Profile bad_profile = Read(*ForPid(written, 2001));
  EXPECT_EQ(PathsOf(bad_profile), PathsOf(ExpectedProfile(bad_stream)));
  EXPECT_EQ(bad_profile.totals().connections_dropped(), 1u);
  EXPECT_EQ(bad_profile.process().end_reason(), "connection lost");
  bool warned = false;
  for (const auto& w : bad_profile.process().warnings()) {
    warned |= w.find("unknown parent node 899") != std::string::npos;
  }
  EXPECT_TRUE(warned);

  const profile::Profile good_profile = Read(*ForPid(written, 2002));
  EXPECT_TRUE(MessageDifferencer::Equals(good_profile, ExpectedProfile(good_stream)));
}

TEST_F(ServerTest, TruncatedAndOversizedStreamsAreDropped) {
  auto server = StartServer();
  ASSERT_TRUE(server);
  const auto stream = SyntheticAgentStream(3001, 8, 2, 1, false);
  {
    ClientSocket truncated(socket_path_);
    std::string bytes = Frames(stream);
    wire::AgentMessage extra = SyntheticAgentStream(3001, 9, 1, 1, false)[1];
    std::string tail;
    AppendFrame(extra, &tail);
    bytes += tail.substr(0, tail.size() / 2);  // the program died mid-send
    truncated.Send(bytes);
  }
  {
    ClientSocket oversized(socket_path_);
    std::string bytes = Frames({Hello(3002)});
    bytes += std::string("\x00\x00\x00\x10", 4);  // 256 MiB, over the 1 MiB limit
    oversized.Send(bytes);
  }
  {
    ClientSocket zero(socket_path_);
    zero.Send(std::string("\x00\x00\x00\x00", 4));
  }
  const auto written = server->Finish(kDrain);
  EXPECT_EQ(server->connections_dropped(), 3u);
  ASSERT_EQ(written.size(), 2u);  // the zero-length one never said Hello
  const profile::Profile truncated = Read(*ForPid(written, 3001));
  EXPECT_EQ(PathsOf(truncated), PathsOf(ExpectedProfile(stream)));
  EXPECT_EQ(truncated.totals().connections_dropped(), 1u);
  const profile::Profile oversized = Read(*ForPid(written, 3002));
  EXPECT_EQ(oversized.nodes_size(), 1);
  EXPECT_EQ(oversized.process().pid(), 3002u);
}

TEST_F(ServerTest, FinishWritesOpenSessionsAsConnectionLost) {
  auto server = StartServer();
  ASSERT_TRUE(server);
  const auto stream = SyntheticAgentStream(4001, 3, 4, 2, /*goodbye=*/false);
  ClientSocket agent(socket_path_);  // stays open across Finish
  ASSERT_TRUE(agent.Send(Frames(stream)));
  const auto written = server->Finish(milliseconds(0));
  ASSERT_EQ(written.size(), 1u);
  ASSERT_TRUE(written[0].status.ok()) << written[0].status.message();
  const profile::Profile p = Read(written[0]);
  EXPECT_EQ(p.process().end_reason(), "connection lost");
  // Everything sent before Finish is in, although the connection never ended.
  EXPECT_EQ(PathsOf(p), PathsOf(ExpectedProfile(stream)));
  EXPECT_EQ(p.totals().connections_dropped(), 0u);
  EXPECT_EQ(server->connections_dropped(), 0u);
}

TEST_F(ServerTest, NeverOverwritesAnExistingProfile) {
  { std::ofstream(dir_.File("synthetic.5001.cilkprof")) << "older run"; }
  auto server = StartServer();
  ASSERT_TRUE(server);
  for (int i = 0; i < 2; ++i) {
    ClientSocket agent(socket_path_);
    agent.Send(Frames(SyntheticAgentStream(5001, i)));
  }
  const auto written = server->Finish(kDrain);
  ASSERT_EQ(written.size(), 2u);
  std::set<std::string> paths;
  for (const auto& w : written) paths.insert(w.path);
  EXPECT_EQ(paths, (std::set<std::string>{dir_.File("synthetic.5001.1.cilkprof"),
                                          dir_.File("synthetic.5001.2.cilkprof")}));
  std::ifstream older(dir_.File("synthetic.5001.cilkprof"));
  std::string content;
  std::getline(older, content);
  EXPECT_EQ(content, "older run");
}

TEST_F(ServerTest, ConnectionsWithoutHelloWriteNothing) {
  auto server = StartServer();
  ASSERT_TRUE(server);
  { ClientSocket probe(socket_path_); }
  const auto written = server->Finish(kDrain);
  EXPECT_TRUE(written.empty());
  EXPECT_EQ(server->connections_accepted(), 1u);
  EXPECT_EQ(server->connections_dropped(), 0u);
}

TEST_F(ServerTest, TcpListenerServesAgentsToo) {
  auto server = StartServer("127.0.0.1:0");
  ASSERT_TRUE(server);
  ASSERT_NE(server->tcp_port(), 0);
  const auto stream = SyntheticAgentStream(6001, 4);
  {
    ClientSocket agent(ConnectTcp(server->tcp_port()));
    ASSERT_TRUE(agent.connected());
    EXPECT_TRUE(agent.Send(AuthLine() + Frames(stream), 50));
  }
  const auto written = server->Finish(kDrain);
  ASSERT_EQ(written.size(), 1u);
  EXPECT_TRUE(MessageDifferencer::Equals(Read(written[0]), ExpectedProfile(stream)));
}

TEST_F(ServerTest, SocketPathProblemsAreClearErrors) {
  {
    auto first = StartServer();
    ASSERT_TRUE(first);
    AggregatorOptions options;
    options.unix_socket_path = socket_path_;
    auto second = Aggregator::Start(options, FakeSymbols());
    ASSERT_FALSE(second.ok());
    EXPECT_NE(second.status().message().find("already listening"), std::string::npos);
    first->Finish(milliseconds(0));
  }
  {
    // A stale socket (its aggregator died) is replaced.
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, socket_path_.c_str(), sizeof addr.sun_path - 1);
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    ::close(fd);
    auto replaced = StartServer();
    EXPECT_TRUE(replaced);
  }
  {
    const std::string file = dir_.File("regular");
    std::ofstream(file) << "x";
    AggregatorOptions options;
    options.unix_socket_path = file;
    auto refused = Aggregator::Start(options, FakeSymbols());
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.status().message().find("is not a socket"), std::string::npos);
  }
  {
    AggregatorOptions options;
    options.unix_socket_path = dir_.File(std::string(200, 'x'));
    auto refused = Aggregator::Start(options, FakeSymbols());
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.status().message().find("choose a shorter path"), std::string::npos);
  }
  {
    AggregatorOptions options;
    options.unix_socket_path = dir_.File("missing-dir/agg.sock");
    auto refused = Aggregator::Start(options, FakeSymbols());
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.status().message().find("directory exists"), std::string::npos);
  }
}

}  // namespace
}  // namespace cilkprof::aggregator
