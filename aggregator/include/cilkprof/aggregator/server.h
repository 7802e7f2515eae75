// The aggregator: accepts agents on a Unix stream socket (and optionally TCP), merges
// each process's per-thread CCTs, symbolizes, and writes one profile file per profiled
// process (a fork child is its own profile; the images a process exec's through, one
// agent connection each, share one profile: see "Exec chains" below). Runs its I/O on
// its own thread (Boost.Asio). Embedded in `cilkprof run`; the daemon `cilkprofd` wraps
// the same class.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cilkprof/aggregator/symbol_source.h"
#include "cilkprof/common/status.h"
#include "cilkprof/profile.pb.h"

namespace cilkprof::aggregator {

// One profiled process: the data of one agent connection, or of several when the
// process exec'd (then `executable` is its last image).
struct ProcessKey {
  uint32_t pid = 0;
  uint32_t ppid = 0;
  std::string executable;
  // 0 for the first connection the aggregator accepted, then 1, 2...; for a process
  // that exec'd, the sequence of its first image's connection.
  uint32_t sequence = 0;
  std::vector<std::string> exec_chain;  // the executables it exec'd through, oldest first
  // Continuous mode: the window the profile covers (ns since the Unix epoch; the end
  // of a connection's last window is when it ended); 0 for a whole process.
  uint64_t window_start_unix_ns = 0;
  uint64_t window_end_unix_ns = 0;
};

struct WrittenProfile {
  ProcessKey process;
  std::string path;             // empty if writing failed or recorded_nothing
  Status status;                // why writing failed
  // Not written because the process recorded nothing (skip_empty_profiles).
  bool recorded_nothing = false;
  profile::Totals totals;
  uint32_t threads = 0;
  double duration_s = 0;
  std::string runtime;  // ProcessInfo.runtime: the task-parallel runtime it ran on, "" if none
};

struct AggregatorOptions {
  // Required. Created with mode unix_socket_mode (bound under a temporary name, then
  // renamed, so it never exists with other permissions or without a listener) and
  // removed at shutdown if it is still ours. A stale socket left by a dead aggregator
  // is replaced; a live one, or a file that is not a socket, is an error. Put it in a
  // directory only its owner can write to (docs/SECURITY.md).
  std::string unix_socket_path;
  // 0600: only the aggregator's user can connect. A daemon that serves other users
  // (allowed_peer_uids) needs 0660 or 0666; the peer check below still applies.
  uint32_t unix_socket_mode = 0600;
  // The uids whose processes may connect to the Unix socket, besides root (the
  // kernel's SO_PEERCRED says who connected); empty: the aggregator's own effective
  // uid. Others are refused and logged.
  std::vector<uint32_t> allowed_peer_uids;
  // Optional "host:port" ("[::1]:7000" for IPv6) to listen on as well; port 0 picks a
  // free port (see tcp_port()). Requires tcp_secret_file: every TCP client must first
  // send "CILKPROF-AUTH <token>\n" with the token that file holds (docs/SECURITY.md).
  // The token keeps out other users, not eavesdroppers: trusted networks only.
  std::string tcp_endpoint;
  // A file of 32 to 256 hex digits, owned by the aggregator's user (or root), mode
  // 0600 or stricter.
  std::string tcp_secret_file;
  size_t max_frame_bytes = 64u << 20;
  // The most memory all connections together may hold in frames being received. A
  // connection whose next frame does not fit waits unread until memory is released;
  // a frame larger than the budget drops its connection.
  size_t memory_budget_bytes = 256u << 20;
  // Per client (the process that connected to the Unix socket, or the TCP address),
  // 0 = unlimited: connections open at once; profiles written per limit_window (the
  // rest are not written: counted in stats() and logged); TCP connections accepted
  // per limit_window. Per uid: connections open at once from all its processes.
  uint32_t max_connections_per_client = 64;
  uint32_t max_connections_per_uid = 1024;
  uint32_t max_profiles_per_client = 600;
  uint32_t max_tcp_connections_per_address = 600;
  std::chrono::milliseconds limit_window{60000};
  // A connection that holds memory for a frame and sends nothing of it for this long
  // while other connections wait for memory is dropped; a TCP client that has not
  // authenticated within it is refused. 0: never.
  std::chrono::milliseconds stall_timeout{30000};
  // Chooses where a process's profile goes; called on the aggregator's writer thread
  // when the connection ends. Must return a path that does not exist yet: the file is
  // written with WriteNewProfileFile, and if the path appeared meanwhile output_path
  // is asked again (a few times) rather than overwriting it.
  std::function<std::string(const ProcessKey&)> output_path;
  // Called after each profile is written (or fails to be), on the writer thread. It
  // must not call Finish() or destroy the Aggregator. Not called for the profiles
  // skip_empty_profiles leaves out.
  std::function<void(const WrittenProfile&)> on_written;
  // Do not write the profiles of processes that recorded nothing (Session::
  // RecordedNothing: the shells, `env`s and `readlink`s a wrapper script forks), except
  // the process of the first connection, the program itself; Finish() lists them
  // with recorded_nothing set.
  bool skip_empty_profiles = false;
  // How long the image a process exec'd from waits for the new image's agent to say
  // Hello before it is written alone (the new program may run without the agent: a
  // static or setuid binary, or LD_PRELOAD removed). Finish() does not wait for it.
  std::chrono::milliseconds exec_successor_wait{30000};
  // Whether Finish() lists every profile written. A daemon that runs for days writes a
  // profile per process per window: it sets this false and reads the counts in stats()
  // instead, so that its memory does not grow with the files it wrote.
  bool list_written_profiles = true;
  // Continuous mode (see "Windows" below); 0: off, one profile per process as it ends.
  // Windows are aligned to multiples of it since the Unix epoch: the first one starts
  // at the last multiple before Start; CutWindow ends each.
  std::chrono::nanoseconds window{0};
  // Rotation: the newest `keep_windows` window files of each process (pid and
  // executable) are kept, older ones that this aggregator wrote are deleted; 0: all.
  uint32_t keep_windows = 0;
};

// The aggregator's own account of its clients and its memory.
struct AggregatorStats {
  uint64_t connections_accepted = 0;  // by the listeners, the refused ones included
  uint64_t connections_open = 0;
  uint64_t connections_dropped = 0;   // for malformed, truncated, oversized or stalled data
  // Closed as soon as accepted: a uid not allowed (or unknown), a per-client or
  // per-uid connection limit, the TCP rate limit; or a TCP client that did not
  // authenticate.
  uint64_t refused_peer_uid = 0;
  uint64_t refused_connection_limit = 0;
  uint64_t refused_tcp_rate = 0;
  uint64_t refused_authentication = 0;
  uint64_t profiles_over_limit = 0;   // not written: max_profiles_per_client
  uint64_t profiles_written = 0;      // written where asked
  uint64_t profiles_failed = 0;       // not written where asked (written elsewhere, or lost)
  uint64_t buffered_frame_bytes = 0;  // memory reserved for frames now
  uint64_t peak_buffered_frame_bytes = 0;  // at most memory_budget_bytes
  uint64_t memory_budget_bytes = 0;
  uint64_t memory_waits = 0;          // frames that waited for memory
  uint64_t waiting_for_memory = 0;    // connections waiting now
};

// Threads: one I/O thread runs every connection (each on its own strand: reads,
// decoding and merging); one writer thread builds, symbolizes and writes profiles, so
// a slow symbolization never stalls the sockets. Connections take turns of bounded
// size on the I/O thread, and the writer takes the profiles of different clients in
// turn, so that a client that floods delays the others by one turn at most. A connection's data is written when
// it ends: after Goodbye and end of stream, at end of stream without Goodbye
// ("connection lost"), or when it is dropped for bad data (the profile then holds
// what was merged before, with a warning, and Totals.connections_dropped = 1). A
// connection that never sent a valid Hello writes nothing.
//
// Exec chains. A process that execs keeps its pid (and parent): its agent says Goodbye
// "exec", and the new image's agent connects again with a Hello of the same pid.
// Connections of one (hostname, pid), in the order they were accepted, form a chain
// while each one ended with Goodbye "exec" and the next has the same ppid; the chain
// is written as one profile when its last image ends otherwise (exit, connection
// lost, dropped), or when no next image said Hello within exec_successor_wait, or at
// Finish(). Session::FoldExecPredecessor merges it; images it refuses to fold are
// written separately.
//
// Windows (continuous mode, AggregatorOptions::window; cilkprofd --window). For a
// service connected for days, CutWindow(end) writes, for every open connection whose
// process recorded something since the last cut, a profile of only what was merged in
// that window (ProcessKey and ProcessInfo carry the window's start and end; the file
// name its start) and the session goes on from zero, keeping what later Deltas are
// decoded against (Session::TakeWindow). A window where a process recorded nothing
// writes nothing. When a connection ends, its last window (since the last cut) is
// written as a whole process's profile is, with its end reason; it is left out if it
// recorded nothing and an earlier window of the connection was written. The images of
// an exec chain share their last windows' profile. Older window files are deleted
// beyond keep_windows per process.
//
// The profile's identity is always the Hello's: a connection may come from another
// process than the profiled one (`cilkprof attach` connects with its own credentials,
// then hands the connection to the target's agent). The per-client limits count the
// process that connected (SO_PEERCRED), the log names both.
class Aggregator {
 public:
  // With the libdw symbolizer (defined in cilkprof_aggregator).
  static Result<std::unique_ptr<Aggregator>> Start(AggregatorOptions options);
  // With the given symbolization, one SymbolSource per profile (cilkprof_aggregator_core).
  static Result<std::unique_ptr<Aggregator>> Start(AggregatorOptions options,
                                                   SymbolSourceFactory symbols);
  ~Aggregator();  // stops listening, finishes open sessions as in Finish(0)

  // Stops accepting; waits up to `drain` for open connections to end (an agent sends
  // its last delta at exit); sessions still open then are written with what they
  // have, marked "connection lost". Returns every profile written since Start, in
  // the order they were written, after all of them are on disk. Removes the socket.
  // Later calls return the same list. Not callable from on_written/output_path.
  std::vector<WrittenProfile> Finish(std::chrono::milliseconds drain);

  // Continuous mode: ends the current window at `end_unix_ns` (ns since the Unix epoch;
  // the daemon passes the boundary) and starts the next. What each open connection's
  // agent has sent by now (the bytes in its socket) is merged first. Returns the window
  // profiles written for this cut once they are on disk (rotation done). Returns at
  // once, with nothing, without `window` or after Finish(). Not callable from the
  // aggregator's threads (on_written, output_path).
  std::vector<WrittenProfile> CutWindow(uint64_t end_unix_ns);

  uint64_t connections_accepted() const;
  uint64_t connections_dropped() const;  // for malformed, truncated or oversized data
  // Connections accepted and not yet ended.
  uint64_t connections_open() const;
  // The TCP port listened on (useful with port 0); 0 without TCP.
  uint16_t tcp_port() const;
  AggregatorStats stats() const;

  // The process the collector was started for (cilkprof run's program): with
  // skip_empty_profiles its profile is written even when it recorded nothing, and
  // every other process's is left out then. Before it is set, the first connection
  // stands for it. Callable from any thread.
  void SetProgramPid(uint32_t pid);

 private:
  struct Impl;
  explicit Aggregator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace cilkprof::aggregator
