// Merging one agent connection (one process image) into one calling-context tree.
//
// A connection carries Hello, then Deltas, then (at clean exit) Goodbye; see
// proto/cilkprof/wire.proto. Each thread's CCT arrives as increments: new nodes (each
// after its parent, ids chosen by the agent per thread) and metric increments. The
// session maps every thread's nodes onto one merged tree whose nodes are keyed by
// (merged parent, module identity = path + build-id, offset, frame kind, edge kind):
// the same call path in two threads is the same merged node, and every thread's
// implicit root is the merged node 0, "<program root>". Metric increments and thread
// counters are summed; nothing is ever replaced. Each thread's own increments are also
// kept per thread (ThreadValueTable), for the profile's per-thread values. FRAME_LOCK nodes (issue 14: a lock
// object, a leaf under the context that waited for it or released it) are keyed by the
// lock's address like code, and the Deltas' per-lock totals (LockDelta) go to a
// LockTable keyed the same way; both become one data location per lock.
//
// A Delta is applied all or nothing: it is validated completely (every node id new,
// every parent, module and metric node known, values finite, vectors not longer than
// the metric list, no node under a FRAME_LOCK leaf, lock entries valid) before any of
// it is merged. A message that breaks the protocol is
// refused with a Status saying what was wrong; the session keeps everything merged
// before it, and the caller drops the connection and still writes the profile.
//
// A process that execs keeps its pid: the connection of the image it replaced said
// Goodbye "exec", and the new image's connection starts with its own Hello. The server
// folds the finished sessions of such a chain into the last one (FoldExecPredecessor),
// so that a process gives one profile whatever wrappers it exec'd through.
//
// Continuous mode (cilkprofd --window): TakeWindow moves what was merged since the
// last window into a session of its own, written as that window's profile, and keeps
// what later Deltas are decoded against (the node and module declarations of the
// connection, thread names, the work/span sites): the agent never declares a node twice
// on one connection.
//
// Not thread-safe: one session is used by one connection's strand at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cilkprof/aggregator/lock_table.h"
#include "cilkprof/aggregator/symbol_source.h"
#include "cilkprof/aggregator/thread_values.h"
#include "cilkprof/aggregator/timeline_table.h"
#include "cilkprof/aggregator/workspan_join.h"
#include "cilkprof/common/status.h"
#include "cilkprof/profile.pb.h"
#include "cilkprof/wire.pb.h"

namespace cilkprof::aggregator {

class Session {
 public:
  Session() = default;

  // Merges one message. After an error every later call returns that error again.
  Status Apply(const wire::AgentMessage& message);

  bool has_hello() const { return has_hello_; }
  bool has_goodbye() const { return has_goodbye_; }
  const wire::Hello& hello() const { return hello_; }
  const wire::Goodbye& goodbye() const { return goodbye_; }
  // The connection ended with Goodbye "exec": the process went on in another image.
  bool ended_by_exec() const { return has_goodbye_ && goodbye_.reason() == "exec"; }
  const Status& error() const { return error_; }
  uint64_t deltas_applied() const { return deltas_applied_; }
  size_t merged_nodes() const { return nodes_.size(); }

  // Records that the connection was dropped for bad data: the reason becomes a
  // warning of the profile and Totals.connections_dropped is 1.
  void MarkDropped(const std::string& reason);

  // Adds a warning for the user to the profile's ProcessInfo.warnings.
  void AddWarning(std::string warning) { warnings_.push_back(std::move(warning)); }

  // Nothing to show: no sample (working, idle or probe), no dropped sample, no metric
  // value, no work/span data, no dropped connection.
  bool RecordedNothing() const;

  // Takes in the finished session of the image this one's process exec'd from (or of
  // the same image before a failed exec): its tree, threads (the thread that called
  // exec is the same thread here, so equal (thread_index, tid) are summed), modules,
  // warnings, start time and exec chain, which gains `earlier`'s image. Both sessions
  // must have ended. Refused, with this session unchanged, when the two cannot share
  // one profile: different clocks, periods or metric lists, or work/span data in both.
  Status FoldExecPredecessor(const Session& earlier);
  // The images folded in, oldest first.
  const std::vector<profile::ExecImage>& exec_chain() const { return exec_chain_; }

  // For a connection that ended without Goodbye (the process was killed by a signal
  // no handler sees, like SIGKILL): what it lost after the agent's last flush, from
  // the flush times and CPU times the Deltas carry, as a warning for the profile.
  // Empty when there is nothing to say (a Goodbye came, or no Delta said when).
  std::string UnflushedTailWarning(uint64_t end_unix_ns) const;

  // Continuous mode. The start of the window being merged (ns since the Unix epoch; 0:
  // not windowed), set when the Hello arrives and by each TakeWindow.
  void set_window_start(uint64_t unix_ns) { window_start_unix_ns_ = unix_ns; }
  uint64_t window_start_unix_ns() const { return window_start_unix_ns_; }
  // Ends the window at `end_unix_ns` and returns it as a session of its own: the nodes
  // that hold a value in the window (and their ancestors), the threads that sent
  // something in it with their counters' increments (deepest_stack stays the running
  // maximum), the lock and work/span totals of the window, the Hello, the modules, the
  // warnings and the exec chain. This session continues with every value zeroed, the
  // next window starting at `end_unix_ns`. `last`: the connection ended, and the window
  // also takes the Goodbye, the drop reasons and the flush times (its profile ends as a
  // whole process's does); otherwise its profile's end reason is "window". Requires
  // has_hello().
  std::unique_ptr<Session> TakeWindow(uint64_t end_unix_ns, bool last);
  // In a window's session: how many windows of the same connection that recorded
  // something came before it.
  uint32_t earlier_windows() const { return earlier_windows_; }

  // Builds the profile: symbolizes each distinct location once, nodes in
  // parent-before-child order, exclusive metrics. `end_unix_ns` is used when no
  // Goodbye came (end reason "connection lost"). Requires has_hello().
  profile::Profile BuildProfile(SymbolSource& symbols, uint64_t end_unix_ns) const;

 private:
  struct MergedNode {
    uint32_t parent = 0;
    uint32_t module = 0;  // index into modules_; 0 = unknown (offset is an address)
    uint64_t offset = 0;
    int kind = 0;         // wire::FrameKind
    int edge = 0;         // wire::EdgeKind
    std::vector<double> exclusive;
  };
  struct NodeKey {
    uint32_t parent;
    uint32_t module;
    uint64_t offset;
    int kind;
    int edge;
    bool operator==(const NodeKey&) const = default;
  };
  struct NodeKeyHash {
    size_t operator()(const NodeKey& k) const;
  };
  struct ModuleIdentity {
    std::string path;
    std::string build_id;
  };
  struct ThreadState {
    uint32_t tid = 0;
    uint32_t thread_index = 0;
    std::string name;
    wire::ThreadCounters counters;
    bool exited = false;
    bool in_window = false;  // sent something since the last TakeWindow
    std::unordered_map<uint32_t, uint32_t> node_map;  // agent node id -> merged index
  };
  using ThreadKey = std::pair<uint32_t, uint32_t>;  // (thread_index, tid)

  Status ApplyHello(const wire::Hello& hello);
  Status ValidateDelta(const wire::Delta& delta) const;
  void MergeDelta(const wire::Delta& delta);
  uint32_t MergedChild(uint32_t parent, const wire::NewNode& node);
  uint32_t MergedChild(const NodeKey& key);
  uint64_t SampleCount() const;

  Status error_;
  bool has_hello_ = false;
  bool has_goodbye_ = false;
  wire::Hello hello_;
  wire::Goodbye goodbye_;
  uint64_t deltas_applied_ = 0;
  std::vector<std::string> drop_reasons_;
  std::vector<std::string> warnings_;

  std::vector<ModuleIdentity> modules_{ModuleIdentity{}};  // [0] = unknown module
  std::map<std::pair<std::string, std::string>, uint32_t> module_index_;
  std::unordered_map<uint32_t, uint32_t> connection_modules_;  // agent module id -> index

  std::vector<MergedNode> nodes_{MergedNode{}};  // [0] = "<program root>"
  std::unordered_map<NodeKey, uint32_t, NodeKeyHash> node_index_;
  std::map<ThreadKey, ThreadState> threads_;
  WorkSpanJoin workspan_;  // the work/span call-site table (issue 5)
  LockTable locks_;        // per-lock totals (issue 14)
  TimelineTable timeline_; // per-thread timeline events (issue 16)
  ThreadValueTable thread_values_;  // per-thread exclusive values (issue 16)
  // The agent's last two flushes (Delta.flush_unix_ns, process_cpu_ns), for
  // UnflushedTailWarning.
  uint64_t last_flush_unix_ns_ = 0, last_flush_cpu_ns_ = 0;
  uint64_t previous_flush_unix_ns_ = 0, previous_flush_cpu_ns_ = 0;
  std::vector<profile::ExecImage> exec_chain_;
  // Continuous mode (TakeWindow).
  uint64_t window_start_unix_ns_ = 0;
  uint64_t window_end_unix_ns_ = 0;   // in a window's session
  bool window_cut_ = false;           // a window's session whose process went on
  uint32_t earlier_windows_ = 0;      // windows taken that recorded something
  uint64_t deltas_before_window_ = 0;
};

}  // namespace cilkprof::aggregator
