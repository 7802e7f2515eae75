// The agent's side of TCP authentication (issue 12): CILKPROF_TCP_SECRET_FILE is
// checked exactly as cilkprofd checks its own file, the token never reaches a message,
// and the transport sends "CILKPROF-AUTH <token>\n" before the stream's magic, does not
// connect without a token, and spills the whole profile when the daemon resets the
// connection (a refused token) instead of reading it.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cilkprof/common/tcp_secret.h"
#include "config.h"
#include "stream_format.h"
#include "transport.h"
#include "wire_messages.h"

namespace cilkprof::agent {
namespace {

const std::string kToken = "00112233445566778899AABBCCDDEEFF00112233445566778899aabbccddeeff";
const std::string kNormalized = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

std::string TempDir() {
  char pattern[] = "/tmp/cilkprof-tcp-secret-test-XXXXXX";
  return mkdtemp(pattern);
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

void WriteFile(const std::string& path, const std::string& text, mode_t mode) {
  std::ofstream(path) << text;
  ASSERT_EQ(chmod(path.c_str(), mode), 0);
}

Config Parse(const std::map<std::string, std::string>& env, std::vector<std::string>* errors) {
  return ParseConfig(
      [&env](const char* name) -> const char* {
        auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
      },
      errors);
}

class TcpSecretConfig : public ::testing::Test {
 protected:
  ~TcpSecretConfig() override { std::filesystem::remove_all(dir_); }
  Config ParseWith(const std::string& file) {
    std::vector<std::string> errors;
    Config c = Parse({{"CILKPROF_SOCKET", "tcp:127.0.0.1:7070"}, {"CILKPROF_TCP_SECRET_FILE", file}},
                     &errors);
    EXPECT_TRUE(errors.empty());  // a problem with the secret is the spill line's reason
    return c;
  }
  // The problem names the file, says what is wrong, and never shows the token.
  void ExpectProblem(const Config& c, const std::string& path, const std::string& what) {
    EXPECT_TRUE(c.tcp_token.empty());
    EXPECT_NE(c.tcp_auth_problem.find(path), std::string::npos) << c.tcp_auth_problem;
    EXPECT_NE(c.tcp_auth_problem.find(what), std::string::npos) << c.tcp_auth_problem;
    EXPECT_EQ(c.tcp_auth_problem.find(kToken.substr(0, 16)), std::string::npos);
    EXPECT_EQ(c.tcp_auth_problem.find(kNormalized.substr(0, 16)), std::string::npos);
    EXPECT_EQ(c.tcp_auth_problem.find('\n'), std::string::npos);
  }
  std::string dir_ = TempDir();
  std::string file_ = dir_ + "/secret";
};

TEST_F(TcpSecretConfig, ReadsTheTokenOfAPrivateFile) {
  WriteFile(file_, "  " + kToken + "\n", 0600);
  Config c = ParseWith(file_);
  EXPECT_EQ(c.tcp_secret_file, file_);
  EXPECT_EQ(c.tcp_token, kNormalized);
  EXPECT_TRUE(c.tcp_auth_problem.empty());
  WriteFile(file_, kToken, 0400);
  EXPECT_EQ(ParseWith(file_).tcp_token, kNormalized);
}

TEST_F(TcpSecretConfig, WithoutTheVariableATcpSocketHasAProblemThatSaysWhatToSet) {
  std::vector<std::string> errors;
  Config c = Parse({{"CILKPROF_SOCKET", "tcp:127.0.0.1:7070"}}, &errors);
  EXPECT_TRUE(errors.empty());
  EXPECT_TRUE(c.tcp_token.empty());
  EXPECT_NE(c.tcp_auth_problem.find("CILKPROF_TCP_SECRET_FILE is not set"), std::string::npos)
      << c.tcp_auth_problem;
  EXPECT_NE(c.tcp_auth_problem.find("--tcp-secret-file"), std::string::npos) << c.tcp_auth_problem;
}

TEST_F(TcpSecretConfig, AUnixSocketIgnoresTheVariable) {
  WriteFile(file_, kToken, 0644);  // would be refused for TCP
  std::vector<std::string> errors;
  Config c = Parse({{"CILKPROF_SOCKET", "/run/x.sock"}, {"CILKPROF_TCP_SECRET_FILE", file_}}, &errors);
  EXPECT_TRUE(errors.empty());
  EXPECT_TRUE(c.tcp_token.empty());
  EXPECT_TRUE(c.tcp_auth_problem.empty());
}

TEST_F(TcpSecretConfig, RefusesAFileOthersCanRead) {
  WriteFile(file_, kToken, 0640);
  ExpectProblem(ParseWith(file_), file_, "chmod 600");
  WriteFile(file_, kToken, 0602);
  ExpectProblem(ParseWith(file_), file_, "readable or writable by others");
}

TEST_F(TcpSecretConfig, RefusesASymbolicLink) {
  WriteFile(file_, kToken, 0600);
  const std::string link = dir_ + "/link";
  ASSERT_EQ(symlink(file_.c_str(), link.c_str()), 0);
  ExpectProblem(ParseWith(link), link, "symbolic link");
}

TEST_F(TcpSecretConfig, RefusesWhatIsNotARegularFile) {
  ExpectProblem(ParseWith(dir_), dir_, "not a regular file");
  const std::string fifo = dir_ + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  ExpectProblem(ParseWith(fifo), fifo, "not a regular file");  // and does not hang
}

TEST_F(TcpSecretConfig, RefusesAMissingFile) {
  ExpectProblem(ParseWith(dir_ + "/missing"), dir_ + "/missing", "cannot open");
}

TEST_F(TcpSecretConfig, RefusesAFileOfAnotherUser) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give the file away";
  WriteFile(file_, kToken, 0600);
  ASSERT_EQ(chown(file_.c_str(), 65534, 65534), 0);
  ExpectProblem(ParseWith(file_), file_, "belongs to uid 65534");
}

TEST_F(TcpSecretConfig, RefusesAShortOrMalformedToken) {
  WriteFile(file_, kToken.substr(0, 31), 0600);  // 124 bits
  ExpectProblem(ParseWith(file_), file_, "32 to 256 hex digits");
  WriteFile(file_, kToken.substr(0, 40) + "zz", 0600);
  ExpectProblem(ParseWith(file_), file_, "32 to 256 hex digits");
  WriteFile(file_, kToken + " " + kToken, 0600);  // two tokens
  ExpectProblem(ParseWith(file_), file_, "32 to 256 hex digits");
  WriteFile(file_, std::string(257, 'a'), 0600);
  ExpectProblem(ParseWith(file_), file_, "32 to 256 hex digits");
}

// ---- The transport ---------------------------------------------------------------

// A loopback listener standing in for cilkprofd's TCP side.
class Listener {
 public:
  Listener() {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    listen(fd_, 4);
    socklen_t len = sizeof addr;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  ~Listener() { close(fd_); }
  std::string address() const { return "tcp:127.0.0.1:" + std::to_string(port_); }
  // Whether a connection is waiting to be accepted, without waiting.
  bool HasPendingConnection() const {
    pollfd p{fd_, POLLIN, 0};
    return poll(&p, 1, 0) == 1;
  }
  int Accept() const { return accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC); }

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
};

HelloMsg TestHello() {
  HelloMsg h;
  h.pid = 4242;
  h.executable = "/bin/test";
  h.clock = "cpu";
  h.period_ns = 1000000;
  return h;
}

std::string TestGoodbye() {
  GoodbyeMsg goodbye;
  goodbye.reason = "tcp-test-goodbye";
  return EncodeGoodbyeFrame(goodbye);
}

// The daemon's two ways of ending: read everything, then close (accepted); or read the
// authentication line only and close with the rest unread (refused).
struct Peer {
  int fd = -1;
  bool refuse = false;
  std::string received;
};

void* ServePeer(void* arg) {
  Peer* peer = static_cast<Peer*>(arg);
  char buffer[4096];
  if (peer->refuse) {
    // Wait until more than the line is here, so that closing leaves data unread.
    const size_t line = AuthLine(kNormalized).size();
    for (;;) {
      const ssize_t n = recv(peer->fd, buffer, sizeof buffer, MSG_PEEK);
      if (n <= 0 || static_cast<size_t>(n) > line) break;
    }
    const ssize_t n = recv(peer->fd, buffer, line, MSG_WAITALL);
    if (n > 0) peer->received.assign(buffer, static_cast<size_t>(n));
  } else {
    ssize_t n;
    while ((n = recv(peer->fd, buffer, sizeof buffer, 0)) > 0) {
      peer->received.append(buffer, static_cast<size_t>(n));
    }
  }
  close(peer->fd);
  return nullptr;
}

class TcpTransport : public ::testing::Test {
 protected:
  ~TcpTransport() override { std::filesystem::remove_all(dir_); }
  void Start(bool refuse) {
    transport_.Configure(listener_.address(), dir_, 4242);
    transport_.SetTcpToken(kNormalized, "");
    transport_.SetSnapshot([] { return std::string(); });
    transport_.EnsureOpen();
    ASSERT_FALSE(transport_.spilling());
    peer_.fd = listener_.Accept();
    ASSERT_GE(peer_.fd, 0);
    peer_.refuse = refuse;
    ASSERT_EQ(pthread_create(&server_, nullptr, ServePeer, &peer_), 0);
    transport_.EnqueueHello(EncodeHelloFrame(TestHello()));
    transport_.Pump();
  }
  void Finish() {
    transport_.EnqueueGoodbye(TestGoodbye());
    transport_.Drain(60000);  // a guard: the peer ends long before
    transport_.Close();
    pthread_join(server_, nullptr);
  }
  std::string dir_ = TempDir();
  Listener listener_;
  Transport transport_;
  Peer peer_;
  pthread_t server_{};
};

TEST_F(TcpTransport, TheAuthenticationLineComesBeforeTheMagic) {
  Start(/*refuse=*/false);
  Finish();
  const std::string line = "CILKPROF-AUTH " + kNormalized + "\n";
  ASSERT_GT(peer_.received.size(), line.size() + sizeof kStreamMagic);
  EXPECT_EQ(peer_.received.substr(0, line.size()), line);
  EXPECT_EQ(peer_.received.substr(line.size(), sizeof kStreamMagic),
            std::string(kStreamMagic, sizeof kStreamMagic));
  EXPECT_NE(peer_.received.find(TestHello().executable), std::string::npos);
  EXPECT_FALSE(transport_.spilling());  // the peer read it all, then closed
}

TEST_F(TcpTransport, ARefusedConnectionSpillsTheWholeProfileWithItsGoodbye) {
  Start(/*refuse=*/true);
  Finish();
  EXPECT_EQ(peer_.received, AuthLine(kNormalized));
  ASSERT_TRUE(transport_.spilling());
  const std::string spill = Slurp(transport_.spill_path());
  EXPECT_EQ(spill.compare(0, sizeof kStreamMagic, kStreamMagic, sizeof kStreamMagic), 0);
  EXPECT_EQ(spill.find("CILKPROF-AUTH"), std::string::npos);
  EXPECT_EQ(spill.find(kNormalized), std::string::npos);
  EXPECT_NE(spill.find(TestHello().executable), std::string::npos);
  EXPECT_NE(spill.find("tcp-test-goodbye"), std::string::npos);  // the Goodbye, sent before the reset
}

TEST(TcpTransportWithoutToken, DoesNotConnectAndSpills) {
  Listener listener;
  Transport transport;
  const std::string dir = TempDir();
  transport.Configure(listener.address(), dir, 4242);
  transport.SetTcpToken("", "CILKPROF_TCP_SECRET_FILE is not set");
  transport.EnsureOpen();
  EXPECT_TRUE(transport.spilling());
  EXPECT_FALSE(listener.HasPendingConnection());
  transport.EnqueueHello(EncodeHelloFrame(TestHello()));
  transport.Close();
  EXPECT_NE(Slurp(transport.spill_path()).find(TestHello().executable), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace cilkprof::agent
