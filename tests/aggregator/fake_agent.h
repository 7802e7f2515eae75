// A fake agent for server, import and fuzz tests: synthetic but well-formed streams,
// the profile a correct aggregator must build from them, and socket senders.
#pragma once

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "cilkprof/aggregator/session.h"
#include "wire_builders.h"

namespace cilkprof::aggregator::testing {

// Hello, `deltas` Deltas growing `threads` per-thread CCTs (shared addresses, so
// merging matters), Goodbye. Deterministic for a seed.
inline std::vector<wire::AgentMessage> SyntheticAgentStream(uint32_t pid, uint32_t seed,
                                                           int deltas = 5, int threads = 3,
                                                           bool goodbye = true) {
  std::mt19937 rng(seed);
  std::vector<wire::AgentMessage> out{Hello(pid, "/opt/bin/synthetic")};
  std::vector<uint32_t> next_id(threads, 1);
  for (int d = 0; d < deltas; ++d) {
    wire::AgentMessage m;
    wire::Delta* delta = m.mutable_delta();
    if (d == 0) {
      AddModule(delta, 1, "/opt/bin/synthetic", "build-1");
      AddModule(delta, 2, "/usr/lib/libwork.so");
    }
    if (d == 2) AddModule(delta, 3, "/usr/lib/plugin.so");
    for (int t = 0; t < threads; ++t) {
      wire::ThreadDelta* td = AddThread(delta, 5000 + t, t, "t" + std::to_string(t));
      const int fresh = static_cast<int>(rng() % 6);
      for (int k = 0; k < fresh; ++k) {
        const uint32_t id = next_id[t]++;
        const uint32_t parent = static_cast<uint32_t>(rng() % id);  // 0 .. id-1: known
        const uint32_t module = d >= 2 ? 1 + rng() % 3 : 1 + rng() % 2;
        const uint64_t offset = 0x1000 + 0x10 * (rng() % 8);
        AddNode(td, id, parent, module, offset,
                rng() % 5 == 0 ? wire::EDGE_SPAWN : wire::EDGE_CALL);
      }
      const int with_metrics = static_cast<int>(rng() % 4);
      for (int k = 0; k < with_metrics; ++k) {
        const uint32_t node = static_cast<uint32_t>(rng() % next_id[t]);
        const double samples = 1 + rng() % 5;
        AddMetrics(td, node, {samples, samples * 1000});
      }
      AddCounters(td, 1 + rng() % 10, rng() % 2, 1000 * (1 + rng() % 10));
      if (d == deltas - 1 && t > 0) td->set_exited(true);
    }
    out.push_back(std::move(m));
  }
  if (goodbye) out.push_back(Goodbye());
  return out;
}

// The profile a correct aggregator builds from `messages` (with FakeSymbolSource).
inline profile::Profile ExpectedProfile(const std::vector<wire::AgentMessage>& messages,
                                        uint64_t end_unix_ns = 0) {
  Session session;
  for (const auto& m : messages) {
    if (!session.Apply(m).ok()) break;
  }
  FakeSymbolSource symbols;
  return session.BuildProfile(symbols, end_unix_ns);
}

// A blocking client socket; sends ignore EPIPE (the server may drop us).
class ClientSocket {
 public:
  explicit ClientSocket(const std::string& unix_path) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, unix_path.c_str(), sizeof addr.sun_path - 1);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  explicit ClientSocket(int connected_fd) : fd_(connected_fd), connected_(fd_ >= 0) {}
  ~ClientSocket() { Close(); }
  ClientSocket(const ClientSocket&) = delete;
  ClientSocket& operator=(const ClientSocket&) = delete;

  bool connected() const { return connected_; }
  // Sends in chunks of `chunk` bytes; false once the peer is gone.
  bool Send(std::string_view bytes, size_t chunk = 1 << 20) {
    for (size_t at = 0; at < bytes.size();) {
      const size_t n = std::min(chunk, bytes.size() - at);
      const ssize_t sent = ::send(fd_, bytes.data() + at, n, MSG_NOSIGNAL);
      if (sent < 0 && errno == EINTR) continue;
      if (sent <= 0) return false;
      at += static_cast<size_t>(sent);
    }
    return true;
  }
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

}  // namespace cilkprof::aggregator::testing
