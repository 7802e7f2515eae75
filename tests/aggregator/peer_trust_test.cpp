// Who may send profiles to the aggregator (issue 12, row 3, the daemon's side; row 5,
// forged profiles over TCP): Unix-socket peers by their kernel credentials, TCP
// clients by a shared token, TCP connections per address per window.
#include <pwd.h>
#include <sys/stat.h>

#include <gtest/gtest.h>
#include <google/protobuf/util/message_differencer.h>

#include <fstream>

#include "cilkprof/aggregator/profile_io.h"
#include "server_fixture.h"

namespace cilkprof::aggregator {
namespace {

using namespace testing;  // NOLINT: the builders
using google::protobuf::util::MessageDifferencer;
using std::chrono::milliseconds;

constexpr milliseconds kDrain{60000};

class PeerTrustTest : public ServerFixture {};

TEST_F(PeerTrustTest, TcpIsOffByDefault) {
  AggregatorOptions defaults;
  EXPECT_TRUE(defaults.tcp_endpoint.empty());
  auto server = Start(Options());
  ASSERT_TRUE(server);
  EXPECT_EQ(server->tcp_port(), 0);
  server->Finish(milliseconds(0));
}

// Run as root, a process of another uid connects; otherwise the allowed list names
// another uid than ours. Either way the kernel's credentials decide, not the Hello.
// Not as root under ThreadSanitizer, which does not support fork() in a process that
// runs threads (here the aggregator's: it then reports the parent's earlier writes as
// races), and root's own connections are always served: the other builds run it.
TEST_F(PeerTrustTest, UnixPeersOfOtherUidsAreRefused) {
  AggregatorOptions options = Options();
  const bool root = ::geteuid() == 0;
#if defined(__SANITIZE_THREAD__)
  if (root) GTEST_SKIP() << "as root this test forks, which ThreadSanitizer does not support with threads running";
#endif
  constexpr uid_t kOther = 65534;  // nobody
  if (root) {
    // Reachable by the other user, so that the peer check, not the file mode, refuses.
    ASSERT_EQ(::chmod(dir_.path().c_str(), 0755), 0);
    options.unix_socket_mode = 0666;
  } else {
    options.allowed_peer_uids = {static_cast<uint32_t>(::geteuid()) + 1};
  }
  auto server = Start(options);
  ASSERT_TRUE(server);
  const std::string stream = Frames(SyntheticAgentStream(4242, 1));
  if (root) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, socket_path_.c_str(), sizeof addr.sun_path - 1);
    const pid_t child = ::fork();
    if (child == 0) {
      if (::setresgid(kOther, kOther, kOther) != 0 || ::setresuid(kOther, kOther, kOther) != 0) _exit(2);
      const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) _exit(3);
      ::send(fd, stream.data(), stream.size(), MSG_NOSIGNAL);
      ::close(fd);
      _exit(0);
    }
    int status = -1;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  } else {
    ClientSocket agent(socket_path_);
    ASSERT_TRUE(agent.connected());
    agent.Send(stream);
  }
  ASSERT_TRUE(WaitUntil([&] { return server->stats().refused_peer_uid == 1; }));
  const auto written = server->Finish(kDrain);
  EXPECT_TRUE(written.empty()) << "a profile from a refused peer was written";
  EXPECT_EQ(FilesInOutputDirectory(), 0u);
  EXPECT_EQ(server->stats().connections_accepted, 1u);
}

TEST_F(PeerTrustTest, AllowedUidsAreServed) {
  AggregatorOptions options = Options();
  options.allowed_peer_uids = {static_cast<uint32_t>(::geteuid())};
  auto server = Start(options);
  ASSERT_TRUE(server);
  const auto stream = SyntheticAgentStream(4243, 2);
  {
    ClientSocket agent(socket_path_);
    ASSERT_TRUE(agent.Send(Frames(stream)));
  }
  const auto written = server->Finish(kDrain);
  ASSERT_EQ(written.size(), 1u);
  EXPECT_EQ(server->stats().refused_peer_uid, 0u);
}

class TcpAuthTest : public ServerFixture {
 protected:
  AggregatorOptions TcpOptions() {
    AggregatorOptions options = Options();
    options.tcp_endpoint = "127.0.0.1:0";
    options.tcp_secret_file = dir_.File("secret");
    EXPECT_TRUE(WriteSecretFile(options.tcp_secret_file));
    return options;
  }
};

TEST_F(TcpAuthTest, TcpWithoutAGoodSecretFileDoesNotStart) {
  auto expect_refused = [&](AggregatorOptions options, const std::string& why) {
    auto started = Aggregator::Start(std::move(options), FakeSymbols());
    ASSERT_FALSE(started.ok()) << "started although " << why;
    EXPECT_NE(started.status().message().find(why), std::string::npos) << started.status().message();
  };
  AggregatorOptions options = TcpOptions();
  options.tcp_secret_file.clear();
  expect_refused(options, "must be authenticated");

  options = TcpOptions();
  ASSERT_EQ(::chmod(options.tcp_secret_file.c_str(), 0644), 0);
  expect_refused(options, "chmod 600");

  options = TcpOptions();
  ASSERT_EQ(::symlink(options.tcp_secret_file.c_str(), dir_.File("link").c_str()), 0);
  options.tcp_secret_file = dir_.File("link");
  expect_refused(options, "symbolic link");

  options = TcpOptions();
  ASSERT_TRUE(WriteSecretFile(options.tcp_secret_file, "0123456789abcdef"));  // 64 bits
  expect_refused(options, "32 to 256 hex digits");

  options = TcpOptions();
  ASSERT_TRUE(WriteSecretFile(options.tcp_secret_file, std::string(64, 'g')));
  expect_refused(options, "32 to 256 hex digits");

  options = TcpOptions();
  options.tcp_secret_file = dir_.File("missing");
  expect_refused(options, "cannot open");

  if (::geteuid() == 0) {
    options = TcpOptions();
    ASSERT_EQ(::chown(options.tcp_secret_file.c_str(), 65534, 65534), 0);
    expect_refused(options, "belongs to uid 65534");
  }
  // Nothing was left listening.
  struct stat st {};
  EXPECT_NE(::lstat(socket_path_.c_str(), &st), 0);
}

TEST_F(TcpAuthTest, OnlyClientsWithTheTokenAreServed) {
  auto server = Start(TcpOptions());
  ASSERT_TRUE(server);
  const uint16_t port = server->tcp_port();
  ASSERT_NE(port, 0);
  auto send = [&](const std::string& bytes) {
    ClientSocket client(ConnectTcp(port));
    ASSERT_TRUE(client.connected());
    client.Send(bytes, 7);
  };
  const auto forged = SyntheticAgentStream(22, 3);  // "sshd"
  send(Frames(forged));                                                      // no line
  send(AuthLine(std::string(64, 'f')) + Frames(forged));                    // wrong token
  send(AuthLine(kTestToken.substr(0, 62)) + Frames(forged));                // a prefix of it
  send("CILKPROF-AUTH " + std::string(4000, 'a'));                           // no newline
  send("GET / HTTP/1.0\r\n\r\n");                                           // not an agent
  send("");                                                                  // a port scan
  const auto good = SyntheticAgentStream(7001, 4);
  std::string upper = kTestToken;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  send(AuthLine(upper) + Frames(good));  // hex digits in either case

  ASSERT_TRUE(WaitUntil([&] { return server->stats().refused_authentication == 6; }));
  const auto written = server->Finish(kDrain);
  ASSERT_EQ(written.size(), 1u) << "a client without the token was served";
  EXPECT_EQ(written[0].process.pid, 7001u);
  auto read = ReadProfileFile(written[0].path);
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_TRUE(MessageDifferencer::Equals(*read, ExpectedProfile(good)));
  EXPECT_EQ(server->stats().refused_authentication, 6u);
}

TEST_F(TcpAuthTest, AClientThatDoesNotAuthenticateInTimeIsRefused) {
  AggregatorOptions options = TcpOptions();
  options.stall_timeout = milliseconds(50);
  auto server = Start(options);
  ASSERT_TRUE(server);
  ClientSocket slow(ConnectTcp(server->tcp_port()));
  ASSERT_TRUE(slow.Send("CILKPROF-AUTH 0123"));  // and then nothing
  ASSERT_TRUE(WaitUntil([&] { return server->stats().refused_authentication == 1; }));
  // The refusal is counted before the connection is closed and forgotten (on a slow,
  // sanitized build the check below could run in between): wait for the close too.
  ASSERT_TRUE(WaitUntil([&] { return server->connections_open() == 0; }));
  EXPECT_EQ(server->connections_open(), 0u);
  server->Finish(milliseconds(0));
}

TEST_F(TcpAuthTest, ConnectionsPerAddressAreRateLimited) {
  AggregatorOptions options = TcpOptions();
  options.max_tcp_connections_per_address = 3;
  auto server = Start(options);
  ASSERT_TRUE(server);
  for (uint32_t i = 0; i < 5; ++i) {
    ClientSocket client(ConnectTcp(server->tcp_port()));
    ASSERT_TRUE(client.connected());
    client.Send(AuthLine() + Frames(SyntheticAgentStream(8000 + i, i)));
  }
  ASSERT_TRUE(WaitUntil([&] { return server->stats().connections_accepted == 5; }));
  const auto written = server->Finish(kDrain);
  EXPECT_EQ(written.size(), 3u);
  EXPECT_EQ(server->stats().refused_tcp_rate, 2u);
  // The first three, in the order they connected.
  for (uint32_t i = 0; i < 3; ++i) EXPECT_NE(ForPid(written, 8000 + i), nullptr) << i;
}

}  // namespace
}  // namespace cilkprof::aggregator
