// Who is on the other end of an agent connection, and how much each client may ask of
// the aggregator (internal to the server).
//
// A *client* is the unit the per-client limits count: on the Unix socket the process
// that connected (its uid and pid, from SO_PEERCRED, which the kernel fills in at
// connect() and the client cannot forge), over TCP the remote address. The processes
// of one uid are also counted together, so that one user's fork bomb cannot take every
// connection of a daemon that serves several users (--allow-uid).
//
// Limits (each 0 = unlimited):
//   - connections open at once, per client and per uid;
//   - TCP connections accepted per remote address per window;
//   - profiles written per client per window: a client that says Hello and
//     disconnects in a loop writes at most that many files per window.
// A window starts at a key's first event and lasts `window`; the next event after it
// starts a new one. Thread-safe.
#pragma once

#include <sys/socket.h>
#include <sys/types.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <iterator>
#include <unordered_map>

namespace cilkprof::aggregator::internal {

struct PeerIdentity {
  bool is_unix = true;
  bool has_credentials = false;  // Unix: SO_PEERCRED answered
  uint32_t uid = 0;
  int32_t pid = 0;
  std::string address;  // TCP: the remote address, without the port
  uint16_t port = 0;

  // The key of the per-client limits.
  std::string ClientKey() const {
    return is_unix ? fmt::format("uid {} pid {}", uid, pid) : "tcp " + address;
  }
  // For log lines.
  std::string Describe() const {
    if (!is_unix) return fmt::format("{} port {}", address, port);
    return has_credentials ? fmt::format("uid {}, pid {}", uid, pid) : "unknown credentials";
  }
};

// Reads the credentials of the process that connected a Unix stream socket.
inline PeerIdentity UnixPeer(int fd) {
  PeerIdentity peer;
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && len == sizeof cred) {
    peer.has_credentials = true;
    peer.uid = cred.uid;
    peer.pid = cred.pid;
  }
  return peer;
}

struct PeerLimitOptions {
  uint32_t max_connections_per_client = 0;
  uint32_t max_connections_per_uid = 0;
  uint32_t max_tcp_connections_per_address = 0;  // per window
  uint32_t max_profiles_per_client = 0;          // per window
  std::chrono::steady_clock::duration window = std::chrono::minutes(1);
};

class PeerLimits {
 public:
  using Clock = std::chrono::steady_clock;
  enum class Admission { kAdmitted, kClientBusy, kUidBusy, kTcpRate };

  explicit PeerLimits(PeerLimitOptions options) : options_(options) {}
  const PeerLimitOptions& options() const { return options_; }

  // Counts a new connection in, or says which limit refuses it (nothing counted then).
  Admission AdmitConnection(const PeerIdentity& peer, Clock::time_point now) {
    std::lock_guard lock(mutex_);
    const std::string client = peer.ClientKey();
    if (!peer.is_unix && !CountInWindow(&tcp_windows_, client, now,
                                         options_.max_tcp_connections_per_address)) {
      return Admission::kTcpRate;
    }
    if (Over(open_by_client_, client, options_.max_connections_per_client)) {
      return Admission::kClientBusy;
    }
    if (peer.is_unix && Over(open_by_uid_, peer.uid, options_.max_connections_per_uid)) {
      return Admission::kUidBusy;
    }
    ++open_by_client_[client];
    if (peer.is_unix) ++open_by_uid_[peer.uid];
    return Admission::kAdmitted;
  }

  // A connection AdmitConnection let in has ended.
  void ConnectionEnded(const PeerIdentity& peer) {
    std::lock_guard lock(mutex_);
    Decrement(&open_by_client_, peer.ClientKey());
    if (peer.is_unix) Decrement(&open_by_uid_, peer.uid);
  }

  // Counts one profile of `client`; false once the client has written its quota for
  // the current window (the profile is then not written).
  bool AllowProfile(const std::string& client, Clock::time_point now) {
    std::lock_guard lock(mutex_);
    return CountInWindow(&profile_windows_, client, now, options_.max_profiles_per_client);
  }

  // Connections open now for `client` (for tests and logs).
  uint32_t open_connections(const std::string& client) const {
    std::lock_guard lock(mutex_);
    const auto it = open_by_client_.find(client);
    return it == open_by_client_.end() ? 0 : it->second;
  }

 private:
  struct Window {
    Clock::time_point start;
    uint32_t count = 0;
  };
  struct Windows {
    std::unordered_map<std::string, Window> by_key;
    size_t next_sweep = 1024;
  };

  template <class Map, class Key>
  static bool Over(const Map& open, const Key& key, uint32_t limit) {
    if (limit == 0) return false;
    const auto it = open.find(key);
    return it != open.end() && it->second >= limit;
  }

  template <class Map, class Key>
  static void Decrement(Map* open, const Key& key) {
    const auto it = open->find(key);
    if (it == open->end()) return;
    if (--it->second == 0) open->erase(it);
  }

  bool CountInWindow(Windows* windows, const std::string& key, Clock::time_point now,
                     uint32_t limit) {
    if (limit == 0) return true;
    ForgetExpired(windows, now);
    Window& w = windows->by_key[key];
    if (w.count == 0 || now - w.start >= options_.window) w = Window{now, 0};
    if (w.count >= limit) return false;
    ++w.count;
    return true;
  }

  // Keys come and go with pids and addresses: drop the windows that ended, now and
  // then, so the tables stay as large as the clients of one window.
  void ForgetExpired(Windows* windows, Clock::time_point now) const {
    auto& by_key = windows->by_key;
    if (by_key.size() < windows->next_sweep) return;
    for (auto it = by_key.begin(); it != by_key.end();) {
      it = now - it->second.start >= options_.window ? by_key.erase(it) : std::next(it);
    }
    windows->next_sweep = std::max<size_t>(1024, 2 * by_key.size());
  }

  const PeerLimitOptions options_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, uint32_t> open_by_client_;
  std::unordered_map<uint32_t, uint32_t> open_by_uid_;
  Windows tcp_windows_;
  Windows profile_windows_;
};

}  // namespace cilkprof::aggregator::internal
