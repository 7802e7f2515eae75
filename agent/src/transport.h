// The agent's side of the connection to the aggregator, and the spill file.
//
// What goes out is a frame stream (stream_format.h): the magic, then sealed frames
// (length, CRC32C, message), on the socket and in spill files alike.
//
// Frames are queued in memory and written with non-blocking sends, so a slow or
// stuck aggregator never blocks the program. The queue is bounded (kMaxQueuedBytes).
// When the aggregator cannot be reached, is not ours (below), closes the connection,
// stops reading long enough for the queue to fill, or the program closes our socket
// behind our back, the transport switches for good to the spill file
// <spill_dir>/cilkprof-<pid>.spill (or cilkprof-<pid>.N.spill if that exists: an
// exec'd image has the same pid), created 0600. The file stands alone, so that
// `cilkprof import FILE` gives the whole profile: the magic, the Hello, then a
// snapshot of everything the process recorded so far (SetSnapshot: what an
// aggregator that died took with it is not lost), then a pending Goodbye, then every
// later frame. One line on stderr says where.
//
// Trust: on a Unix socket the aggregator must run as our own user or as root
// (SO_PEERCRED, checked after connecting): anyone else may have created the socket
// path first to read our argv and paths. Such a listener gets nothing; the profile
// goes to the spill file, with one line on stderr (unless CILKPROF_QUIET).
// TCP carries no peer credentials: the agent cannot tell who listens there. It
// authenticates itself instead: the first bytes of a TCP connection are the line
// "CILKPROF-AUTH <token>\n" (common/tcp_secret.h), sent in the same send() as the
// stream's magic and the Hello, on every connection. Without a token (SetTcpToken) it
// does not connect at all and spills, saying why. The daemon answers nothing and closes
// a connection whose token is wrong, so at the end of a TCP stream Drain() waits for the
// daemon to close its end: a reset means it refused or dropped what we sent, and the
// whole profile goes to the spill file (docs/SECURITY.md, "TCP").
//
// Not signal-safe and not thread-safe: used under the flusher's lock; except the
// Crash* functions, which are async-signal-safe and used by the crash path
// (crash_flush.h) with that lock held.
#pragma once

#include <limits.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>

namespace cilkprof::agent {

class Transport {
 public:
  static constexpr size_t kMaxQueuedBytes = 64u << 20;

  // Remembers where to connect and where to spill. Connecting happens in EnsureOpen().
  void Configure(std::string address, std::string spill_dir, pid_t pid);
  // For a tcp: address: the token to present (NormalizeToken'ed), or, when there is
  // none, why (the reason the spill line gives). Set once at start-up; kept across
  // Configure() and Abandon(), so that a fork child presents it too.
  void SetTcpToken(std::string token, std::string problem);
  // An attach (docs/AGENT.md, "Standby and attach"): `fd` is a stream socket already
  // connected to an aggregator by `cilkprof attach`, whose peer the control socket has
  // checked. The transport never spills then: the profile belongs to whoever attached,
  // not to a file in the program's directories. When the connection fails or the queue
  // overflows, everything queued is dropped and lost() says why; the agent detaches.
  void AdoptConnection(int fd, pid_t pid);
  bool lost() const { return lost_; }
  const std::string& lost_reason() const { return lost_reason_; }
  // Connects on first use (a bounded, blocking connect of at most 2 s), or starts
  // spilling if that fails or the listener is not ours. Idempotent.
  void EnsureOpen();
  // The frames of a connection, unsealed as the encoders return them (the transport
  // seals them). The Hello is the first frame of the connection and of a spill file.
  void EnqueueHello(std::string frame);
  void Enqueue(std::string frame);
  // A Goodbye is not part of a snapshot: it survives the start of a spill.
  void EnqueueGoodbye(std::string frame);
  // Writes what the socket takes now, without blocking.
  void Pump();
  // Waits at most timeout_ms for the queue to drain, then spills what is left. On TCP,
  // once everything is sent, it ends the stream and waits, within the same time, for
  // the aggregator to close its end (it does once it has read all of it); a reset or
  // no close in time spills the whole profile. Called at the end of a connection only.
  void Drain(int timeout_ms);
  // Closes the socket and the spill file (after Drain).
  void Close();
  // In a fork child: forgets the parent's socket and spill file without writing to
  // them (the parent still owns that connection).
  void Abandon();
  // Builds the unsealed frames of everything the process recorded so far, as if to a
  // receiver that has seen none of it, and makes later deltas increments from there:
  // the content of a spill file after its Hello. Called under the same lock as every
  // other use of the transport, only after the Hello was queued.
  void SetSnapshot(std::function<std::string()> build) { snapshot_ = std::move(build); }

  int socket_fd() const { return fd_; }
  bool has_pending() const { return !queue_.empty() && !spilling_; }
  bool spilling() const { return spilling_; }
  bool hello_queued() const { return !hello_.empty(); }
  const std::string& spill_path() const { return spill_path_; }

  // ---- The crash path (crash_flush.h): async-signal-safe, flush lock held. ----
  // Where the final frames can go now.
  enum class Route : uint8_t { kNowhere, kSocket, kSpill };
  Route CrashRoute() const;
  // Socket: sends what is queued (the frame cut short first), waiting until
  // deadline_ms (CLOCK_MONOTONIC); false when the socket failed or the time ran out.
  bool CrashSendQueued(uint64_t deadline_ms);
  // Writes sealed bytes to the socket (until deadline_ms) or the spill file.
  bool CrashWrite(const char* data, size_t size, uint64_t deadline_ms);
  // Gives up the socket and opens a new spill file with the magic and the Hello (the
  // caller writes a full snapshot next). False when no file could be created. The
  // path is then in crash_spill_path().
  bool CrashStartSpill();
  const char* crash_spill_path() const { return crash_spill_path_; }
  const char* address() const { return address_.c_str(); }

 private:
  enum class Kind : uint8_t { kHello, kData, kGoodbye };
  struct Pending {
    std::string bytes;  // sealed (the Hello's with the magic before it)
    Kind kind;
  };

  bool Connect(std::string* why);
  bool IsTcp() const;
  // After a TCP stream was sent and ended: whether the aggregator read all of it.
  bool TcpStreamTaken(uint64_t deadline_ms, std::string* why);
  bool PeerIsTrusted(std::string* why) const;
  bool SocketStillOurs() const;
  void Push(std::string frame, Kind kind);
  void StartSpill(const std::string& why, bool respect_quiet = false);
  void WriteToSpill(const std::string& bytes);
  int OpenSpillFile(char* path, size_t path_size);  // async-signal-safe

  std::string address_, spill_dir_, spill_path_;
  pid_t pid_ = 0;
  bool opened_ = false;
  bool spilling_ = false;
  bool spill_failed_ = false;
  bool handed_ = false;  // AdoptConnection: no spill file, ever
  bool lost_ = false;
  std::string lost_reason_;
  int fd_ = -1;
  dev_t fd_dev_ = 0;
  ino_t fd_ino_ = 0;
  int spill_fd_ = -1;
  std::string hello_;  // sealed, without the magic
  std::string goodbye_;  // sealed; kept after it was sent, for a spill that starts later
  std::string tcp_token_, tcp_problem_;
  std::string auth_line_;  // to send before the magic; set when a TCP connection opens
  std::function<std::string()> snapshot_;
  std::deque<Pending> queue_;
  size_t front_offset_ = 0;  // bytes of queue_.front() already sent
  size_t queued_bytes_ = 0;
  char crash_spill_path_[PATH_MAX] = {};
};

}  // namespace cilkprof::agent
