// A real in-process aggregator for the trust, limit and hostile-client tests: options
// set by each test, profiles in a private directory, the written list kept, and a
// well-behaved agent in a child process (a client of its own: the per-client limits
// count processes).
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cilkprof/aggregator/output_naming.h"
#include "cilkprof/aggregator/server.h"
#include "fake_agent.h"
#include "peer_helpers.h"
#include "temp_dir.h"

namespace cilkprof::aggregator::testing {

class ServerFixture : public ::testing::Test {
 protected:
  // The options every test starts from: limits off, so that each test sets the one it
  // is about.
  AggregatorOptions Options() {
    AggregatorOptions options;
    options.unix_socket_path = socket_path_;
    options.max_frame_bytes = 1 << 20;
    options.max_connections_per_client = 0;
    options.max_connections_per_uid = 0;
    options.max_profiles_per_client = 0;
    options.max_tcp_connections_per_address = 0;
    options.stall_timeout = std::chrono::milliseconds(0);
    options.limit_window = std::chrono::hours(1);  // no test lasts a window
    options.output_path = [dir = dir_.path()](const ProcessKey& key) {
      return UniqueProfilePath(dir, key);
    };
    options.on_written = [this](const WrittenProfile& w) {
      std::lock_guard lock(mutex_);
      written_.push_back(w);
    };
    return options;
  }

  std::unique_ptr<Aggregator> Start(AggregatorOptions options,
                                    SymbolSourceFactory symbols = FakeSymbols()) {
    auto started = Aggregator::Start(std::move(options), std::move(symbols));
    EXPECT_TRUE(started.ok()) << started.status().message();
    return started.ok() ? std::move(*started) : nullptr;
  }

  bool Written(uint32_t pid) {
    std::lock_guard lock(mutex_);
    for (const auto& w : written_) {
      if (w.process.pid == pid) return true;
    }
    return false;
  }

  static const WrittenProfile* ForPid(const std::vector<WrittenProfile>& all, uint32_t pid) {
    for (const auto& w : all) {
      if (w.process.pid == pid) return &w;
    }
    return nullptr;
  }

  size_t FilesInOutputDirectory() const {
    size_t n = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir_.path())) {
      n += entry.path().extension() == ".cilkprof" ? 1 : 0;
    }
    return n;
  }

  // Sends `bytes` to the Unix socket from a child process, which then exits: a client
  // the server tells apart from this test process. Only async-signal-safe calls after
  // fork (the server's threads run in the parent). Returns the child's exit status.
  int SendFromChildProcess(const std::string& bytes) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, socket_path_.c_str(), sizeof addr.sun_path - 1);
    const pid_t child = ::fork();
    if (child == 0) {
      const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) _exit(3);
      for (size_t at = 0; at < bytes.size();) {
        const ssize_t n = ::send(fd, bytes.data() + at, std::min<size_t>(bytes.size() - at, 97),
                                 MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) _exit(4);
        at += static_cast<size_t>(n);
      }
      ::close(fd);
      _exit(0);
    }
    int status = -1;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  }

  TempDir dir_;
  std::string socket_path_ = dir_.File("agg.sock");
  std::mutex mutex_;
  std::vector<WrittenProfile> written_;  // as on_written heard of them
};

}  // namespace cilkprof::aggregator::testing
