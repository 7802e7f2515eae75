// Lock blame end to end (issue 14): the real agent preloaded into lock_program.cc's
// programs of known shape, what it sends read at the wire level (TestReceiver): the
// ThreadCounters lock fields and their exact conservation, the LockDelta totals, and
// the FRAME_LOCK leaves carrying lock_wait and lock_blame at the waiters' and the
// holder's contexts.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "e2e_support.h"

namespace {

using cilkprof::agent::testing::ReceivedConnection;
using cilkprof::agent::testing::RunResult;
using cilkprof::agent::testing::RunUnderAgent;
using cilkprof::agent::testing::TestReceiver;
namespace wire = cilkprof::wire;

struct Range {
  uint64_t lo = 0, hi = 0;
};

// lock_program's printed facts.
struct Facts {
  std::map<std::string, Range> functions;
  std::map<std::string, uint64_t> locks;
  std::map<std::string, int64_t> results;
};

Facts ParseFacts(const std::string& out) {
  Facts facts;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string kind, name;
    words >> kind >> name;
    if (kind == "fn") {
      Range r;
      words >> r.lo >> r.hi;
      facts.functions[name] = r;
    } else if (kind == "lock") {
      words >> facts.locks[name];
    } else if (kind == "result") {
      words >> facts.results[name];
    }
  }
  return facts;
}

struct LockTotals {
  uint32_t kind = 0;
  uint64_t contended = 0, wait_ns = 0, blame_ns = 0, timeouts = 0;
  uint64_t acquisitions = 0;  // estimated
};

struct ThreadLocks {
  uint32_t thread_index = 0;
  uint64_t acquisitions = 0, contended = 0, wait_ns = 0, blame_ns = 0, unblamed_ns = 0, open_ns = 0;
  std::map<uint32_t, wire::NewNode> nodes;
  std::map<uint32_t, std::vector<double>> metrics;  // summed per node
};

// One process's connection, folded.
struct Process {
  uint32_t pid = 0;
  std::map<std::string, uint32_t> metric_index;
  std::map<uint32_t, wire::LoadModule> modules;
  std::map<uint32_t, ThreadLocks> threads;                    // by tid
  std::map<std::pair<uint32_t, uint64_t>, LockTotals> locks;  // by (module, offset)
  uint64_t total(uint64_t ThreadLocks::*field) const {
    uint64_t sum = 0;
    for (const auto& [tid, t] : threads) sum += t.*field;
    return sum;
  }
  // The absolute address of a node (code or lock) or of a lock's key.
  uint64_t Address(uint32_t module_id, uint64_t offset) const {
    if (module_id == 0) return offset;
    auto m = modules.find(module_id);
    return m == modules.end() ? 0 : m->second.load_bias() + offset;
  }
};

Process FoldProcess(const ReceivedConnection& connection) {
  Process p;
  for (const wire::AgentMessage& message : connection.messages) {
    if (message.has_hello()) {
      p.pid = message.hello().pid();
      for (int i = 0; i < message.hello().metrics_size(); ++i) {
        p.metric_index[message.hello().metrics(i).name()] = static_cast<uint32_t>(i);
      }
    }
    if (!message.has_delta()) continue;
    const wire::Delta& delta = message.delta();
    for (const wire::LoadModule& m : delta.modules()) p.modules[m.id()] = m;
    for (const wire::ThreadDelta& t : delta.threads()) {
      ThreadLocks& tl = p.threads[t.tid()];
      tl.thread_index = t.thread_index();
      for (const wire::NewNode& n : t.nodes()) tl.nodes[n.id()] = n;
      for (const wire::NodeMetrics& m : t.metrics()) {
        std::vector<double>& values = tl.metrics[m.node()];
        values.resize(static_cast<size_t>(m.values_size()), 0.0);
        for (int i = 0; i < m.values_size(); ++i) values[static_cast<size_t>(i)] += m.values(i);
      }
      const wire::ThreadCounters& c = t.counters();
      tl.acquisitions += c.lock_acquisitions();
      tl.contended += c.lock_contended();
      tl.wait_ns += c.lock_wait_ns();
      tl.blame_ns += c.lock_blame_ns();
      tl.unblamed_ns += c.lock_unblamed_ns();
      tl.open_ns += c.lock_wait_open_ns();
    }
    for (const wire::LockDelta& l : delta.locks()) {
      LockTotals& totals = p.locks[{l.module_id(), l.offset()}];
      totals.kind = static_cast<uint32_t>(l.kind());
      totals.contended += l.contended();
      totals.wait_ns += l.wait_ns();
      totals.blame_ns += l.blame_ns();
      totals.timeouts += l.timeouts();
      totals.acquisitions += l.acquisitions();
    }
  }
  return p;
}

struct LockRun {
  RunResult result;
  Facts facts;
  std::vector<Process> processes;  // in connection order
};

LockRun RunLockProgram(const std::string& mode, std::map<std::string, std::string> env = {}) {
  TestReceiver receiver;
  env["CILKPROF_SOCKET"] = receiver.socket_path();
  if (env.count("CILKPROF_PERIOD_NS") == 0) env["CILKPROF_PERIOD_NS"] = "1000000";  // 1 ms
  LockRun run;
  run.result = RunUnderAgent(CILKPROF_LOCK_PROGRAM, {mode}, env, receiver.dir());
  EXPECT_EQ(run.result.exit_code, 0) << run.result.err;
  for (const ReceivedConnection& c : receiver.Finish()) {
    EXPECT_EQ(c.error, "");
    run.processes.push_back(FoldProcess(c));
  }
  EXPECT_FALSE(run.processes.empty());
  run.facts = ParseFacts(run.result.out);
  return run;
}

// Conservation, exactly, in every process: wait = blame + unblamed; nothing open.
void ExpectConservation(const Process& p) {
  EXPECT_EQ(p.total(&ThreadLocks::wait_ns), p.total(&ThreadLocks::blame_ns) + p.total(&ThreadLocks::unblamed_ns))
      << "process " << p.pid;
  EXPECT_EQ(p.total(&ThreadLocks::open_ns), 0u);
  uint64_t lock_blame = 0;
  for (const auto& [key, l] : p.locks) lock_blame += l.blame_ns;
  EXPECT_EQ(lock_blame, p.total(&ThreadLocks::blame_ns)) << "the locks' blame is the threads' blame";
}

// Whether the path from node `id` up to the root passes through `range`.
bool PathThrough(const Process& p, const ThreadLocks& t, uint32_t id, const Range& range) {
  for (int guard = 0; id != 0 && guard < 100000; ++guard) {
    auto n = t.nodes.find(id);
    if (n == t.nodes.end()) return false;
    if (n->second.kind() == wire::FRAME_PC) {
      const uint64_t pc = p.Address(n->second.module_id(), n->second.offset());
      if (pc >= range.lo && pc < range.hi) return true;
    }
    id = n->second.parent();
  }
  return false;
}

struct TreeSplit {
  double total = 0, through = 0;  // a metric on FRAME_LOCK leaves of one lock, and under `range`
  bool non_lock_leaf_has_it = false;
};

TreeSplit LockMetric(const Process& p, const std::string& metric, uint64_t lock, const Range& range) {
  TreeSplit split;
  const uint32_t m = p.metric_index.at(metric);
  for (const auto& [tid, t] : p.threads) {
    for (const auto& [id, values] : t.metrics) {
      if (m >= values.size() || values[m] == 0) continue;
      auto n = t.nodes.find(id);
      if (n == t.nodes.end() || n->second.kind() != wire::FRAME_LOCK) {
        split.non_lock_leaf_has_it = true;
        continue;
      }
      if (p.Address(n->second.module_id(), n->second.offset()) != lock) continue;
      split.total += values[m];
      if (PathThrough(p, t, n->second.parent(), range)) split.through += values[m];
    }
  }
  return split;
}

TEST(LockBlameE2E, HolderTakesTheBlameWaitersTheWaitCpuClock) {
  const LockRun run = RunLockProgram("holder");
  ASSERT_EQ(run.processes.size(), 1u);
  const Process& p = run.processes[0];
  ASSERT_EQ(p.metric_index.count("lock_wait"), 1u);
  ASSERT_EQ(p.metric_index.at("lock_wait"), 6u);
  ASSERT_EQ(p.metric_index.at("lock_blame"), 7u);
  ExpectConservation(p);
  // 20 rounds, two waiters asleep in the lock each round while the holder burns 10 ms.
  EXPECT_EQ(p.total(&ThreadLocks::contended), 40u);
  uint64_t holder_blame = 0, waiters_wait = 0;
  for (const auto& [tid, t] : p.threads) {
    if (t.thread_index == 0) {
      holder_blame += t.blame_ns;
      EXPECT_EQ(t.wait_ns, 0u) << "the holder never waits";
    } else {
      waiters_wait += t.wait_ns;
    }
  }
  EXPECT_GE(waiters_wait, 2u * 20u * 10000000u / 2);  // at least half of 2 x 20 x 10 ms
  EXPECT_GE(static_cast<double>(holder_blame), 0.7 * static_cast<double>(waiters_wait));
  // One lock, the program's global L, with the threads' totals.
  ASSERT_EQ(p.locks.size(), 1u);
  const auto& [key, lock] = *p.locks.begin();
  EXPECT_NE(key.first, 0u) << "a global lock is module-relative";
  EXPECT_EQ(p.Address(key.first, key.second), run.facts.locks.at("L"));
  EXPECT_EQ(lock.kind, static_cast<uint32_t>(wire::LOCK_MUTEX));
  EXPECT_EQ(lock.contended, 40u);
  EXPECT_EQ(lock.wait_ns, p.total(&ThreadLocks::wait_ns));
  // The tree: lock_wait under wait_here, lock_blame under hold_long, on L's leaves only,
  // in the measured amounts (sampled with a 1 ms mean: hundreds of crossings).
  const TreeSplit wait = LockMetric(p, "lock_wait", run.facts.locks.at("L"), run.facts.functions.at("wait_here"));
  const TreeSplit blame = LockMetric(p, "lock_blame", run.facts.locks.at("L"), run.facts.functions.at("hold_long"));
  EXPECT_FALSE(wait.non_lock_leaf_has_it);
  EXPECT_FALSE(blame.non_lock_leaf_has_it);
  EXPECT_GT(wait.total, 0.5 * static_cast<double>(waiters_wait));
  EXPECT_LT(wait.total, 1.5 * static_cast<double>(waiters_wait));
  EXPECT_GE(wait.through, 0.95 * wait.total);
  EXPECT_GT(blame.total, 0.5 * static_cast<double>(p.total(&ThreadLocks::blame_ns)));
  EXPECT_LT(blame.total, 1.5 * static_cast<double>(p.total(&ThreadLocks::blame_ns)));
  EXPECT_GE(blame.through, 0.8 * blame.total);
}

TEST(LockBlameE2E, WallClockSamplesOfWaitersAreLockWait) {
  const LockRun run = RunLockProgram("holder", {{"CILKPROF_CLOCK", "wall"}});
  ASSERT_EQ(run.processes.size(), 1u);
  const Process& p = run.processes[0];
  ExpectConservation(p);
  const uint64_t waits = p.total(&ThreadLocks::wait_ns);
  const TreeSplit wait = LockMetric(p, "lock_wait", run.facts.locks.at("L"), run.facts.functions.at("wait_here"));
  EXPECT_FALSE(wait.non_lock_leaf_has_it);
  // The waiters' wall-clock samples, not the measured waits a second time.
  EXPECT_GT(wait.total, 0.5 * static_cast<double>(waits));
  EXPECT_LT(wait.total, 1.5 * static_cast<double>(waits));
  EXPECT_GE(wait.through, 0.9 * wait.total);
}

TEST(LockBlameE2E, OneThreadHasNoWaitAndNoBlame) {
  const LockRun run = RunLockProgram("single");
  const Process& p = run.processes.at(0);
  EXPECT_EQ(p.total(&ThreadLocks::wait_ns), 0u);
  EXPECT_EQ(p.total(&ThreadLocks::blame_ns), 0u);
  EXPECT_EQ(p.total(&ThreadLocks::contended), 0u);
  EXPECT_GE(p.total(&ThreadLocks::acquisitions), 40u);
  EXPECT_TRUE(p.locks.empty());
}

TEST(LockBlameE2E, FailedTrylocksAreNeverWaits) {
  const LockRun run = RunLockProgram("trylock");
  EXPECT_EQ(run.facts.results.at("trylock_busy"), 1000);
  const Process& p = run.processes.at(0);
  EXPECT_GE(p.total(&ThreadLocks::acquisitions), 1u) << "the holder's lock is counted";
  EXPECT_EQ(p.total(&ThreadLocks::wait_ns), 0u);
  EXPECT_EQ(p.total(&ThreadLocks::contended), 0u);
  EXPECT_TRUE(p.locks.empty());
}

TEST(LockBlameE2E, TimedlockTimeoutsWaitWithoutAcquiring) {
  const LockRun run = RunLockProgram("timedlock");
  EXPECT_EQ(run.facts.results.at("timeouts"), 3);
  const Process& p = run.processes.at(0);
  ExpectConservation(p);
  EXPECT_EQ(p.total(&ThreadLocks::contended), 0u);
  EXPECT_GE(p.total(&ThreadLocks::wait_ns), 3u * 5000000u);
  EXPECT_EQ(p.total(&ThreadLocks::unblamed_ns), p.total(&ThreadLocks::wait_ns)) << "nobody released it";
  ASSERT_EQ(p.locks.size(), 1u);
  EXPECT_EQ(p.locks.begin()->second.timeouts, 3u);
  EXPECT_EQ(p.locks.begin()->second.contended, 0u);
}

TEST(LockBlameE2E, RecursiveMutex) {
  const LockRun run = RunLockProgram("recursive");
  const Process& p = run.processes.at(0);
  ExpectConservation(p);
  EXPECT_EQ(p.total(&ThreadLocks::contended), 1u);
  EXPECT_GT(p.total(&ThreadLocks::blame_ns), 0u);
  ASSERT_EQ(p.locks.size(), 1u);
  EXPECT_EQ(p.Address(p.locks.begin()->first.first, p.locks.begin()->first.second), run.facts.locks.at("R"));
}

TEST(LockBlameE2E, RwlockReadersAndWriters) {
  const LockRun run = RunLockProgram("rwlock");
  const Process& p = run.processes.at(0);
  ExpectConservation(p);
  EXPECT_EQ(p.total(&ThreadLocks::contended), 3u);  // two readers, then a writer
  uint64_t writer_blame = 0, readers_blame = 0;
  for (const auto& [tid, t] : p.threads) (t.thread_index == 0 ? writer_blame : readers_blame) += t.blame_ns;
  EXPECT_GT(writer_blame, 0u);
  EXPECT_GT(readers_blame, 0u);
  ASSERT_EQ(p.locks.size(), 1u);
  EXPECT_EQ(p.locks.begin()->second.kind, static_cast<uint32_t>(wire::LOCK_RWLOCK));
}

TEST(LockBlameE2E, Spinlock) {
  const LockRun run = RunLockProgram("spin");
  const Process& p = run.processes.at(0);
  ExpectConservation(p);
  EXPECT_GE(p.total(&ThreadLocks::contended), 1u);
  ASSERT_EQ(p.locks.size(), 1u);
  EXPECT_EQ(p.locks.begin()->second.kind, static_cast<uint32_t>(wire::LOCK_SPIN));
  EXPECT_GT(p.total(&ThreadLocks::blame_ns), 0u);
}

TEST(LockBlameE2E, CondWaitReacquisitionIsWaitTheConditionIsNot) {
  const LockRun run = RunLockProgram("cond");
  const Process& p = run.processes.at(0);
  ExpectConservation(p);
  // 10 rounds: the waiter waits for the signal (>= 40 ms of the signaler's CPU), then
  // for the mutex, which the signaler holds for 10 ms of CPU after signalling. Lock wait
  // is the second part only: at least the holds, at most the spans the program measured
  // around its mutex locks and from each signal to the waiter's return (they enclose
  // the agent's marks), which leave out the waits for the signal, whatever the load.
  const uint64_t wait = p.total(&ThreadLocks::wait_ns);
  EXPECT_GE(wait, 10u * 10000000u / 2);
  EXPECT_LE(wait, static_cast<uint64_t>(run.facts.results.at("wait_spans_ns")));
  EXPECT_GE(p.total(&ThreadLocks::contended), 10u);
}

TEST(LockBlameE2E, LockInSignalHandlerNeverDeadlocks) {
  const LockRun run = RunLockProgram("signal");
  EXPECT_EQ(run.facts.results.at("handled_enough"), 1);
  ExpectConservation(run.processes.at(0));
  EXPECT_GE(run.processes.at(0).total(&ThreadLocks::acquisitions), 1000u) << "the handlers' locks too";
}

TEST(LockBlameE2E, UnlockOfAMutexNotHeld) {
  const LockRun run = RunLockProgram("unheld");
  EXPECT_EQ(run.facts.results.at("errorcheck_unlock"), EPERM);
  EXPECT_EQ(run.facts.results.at("errorcheck_unlock_contended"), EPERM);
  ExpectConservation(run.processes.at(0));
  EXPECT_EQ(run.processes.at(0).total(&ThreadLocks::contended), 1u) << "the waiter behind the bogus unlocks";
}

TEST(LockBlameE2E, ThousandsOfDistinctLocks) {
  const LockRun run = RunLockProgram("many");
  const Process& p = run.processes.at(0);
  ExpectConservation(p);
  const uint64_t first = run.facts.locks.at("first"), last = run.facts.locks.at("last");
  size_t distinct = 0;
  for (const auto& [key, l] : p.locks) {
    const uint64_t at = p.Address(key.first, key.second);
    if (at < first || at > last) continue;
    ++distinct;
    EXPECT_EQ(l.contended, 1u);
  }
  EXPECT_EQ(distinct, 3000u);
}

// A lock destroyed and a new one initialized at its address: the agent goes on (no
// stale waiter, no crash), the address is one lock row with both lives' waits.
TEST(LockBlameE2E, ADestroyedLocksAddressReusedByANewLock) {
  const LockRun run = RunLockProgram("reuse");
  const Process& p = run.processes.at(0);
  ExpectConservation(p);
  const uint64_t at = run.facts.locks.at("reused");
  uint64_t contended = 0, wait = 0, blame = 0;
  for (const auto& [key, l] : p.locks) {
    if (p.Address(key.first, key.second) != at) continue;
    contended += l.contended;
    wait += l.wait_ns;
    blame += l.blame_ns;
  }
  EXPECT_EQ(contended, 2u);
  EXPECT_GT(wait, 0u);
  EXPECT_LE(blame, wait);
  EXPECT_EQ(p.total(&ThreadLocks::contended), 2u);
}

// Per-lock acquisitions are estimated (one uncontended acquisition in about 32 looks its
// lock up): a lock contended once, then taken 200000 times without contention by one
// thread, and a second lock never contended. ~6000 looked-up acquisitions: the estimate
// is within a few percent; 15% is a generous bound. The never-contended lock has no
// record, so no row.
TEST(LockBlameE2E, AcquisitionsPerLockAreEstimated) {
  const LockRun run = RunLockProgram("acquire");
  const Process& p = run.processes.at(0);
  ExpectConservation(p);
  const uint64_t hot = run.facts.locks.at("hot"), quiet = run.facts.locks.at("quiet");
  uint64_t acquisitions = 0, contended = 0;
  bool quiet_row = false;
  for (const auto& [key, l] : p.locks) {
    const uint64_t at = p.Address(key.first, key.second);
    if (at == quiet) quiet_row = true;
    if (at != hot) continue;
    acquisitions += l.acquisitions;
    contended += l.contended;
  }
  EXPECT_EQ(contended, 1u);
  EXPECT_GE(acquisitions, 0.85 * 200000) << acquisitions;
  EXPECT_LE(acquisitions, 1.15 * 200000) << acquisitions;
  EXPECT_FALSE(quiet_row);
  // The threads' exact count has them all: 200000 + 1 + 200000 (quiet) + the waiter's 1.
  EXPECT_GE(p.total(&ThreadLocks::acquisitions), 400002u);
}

TEST(LockBlameE2E, ForkWithAProcessSharedMutex) {
  const LockRun run = RunLockProgram("fork");
  EXPECT_EQ(run.facts.results.at("child_status"), 0);
  ASSERT_EQ(run.processes.size(), 2u);
  for (const Process& p : run.processes) ExpectConservation(p);
  const Process& child = run.processes[0].pid == static_cast<uint32_t>(run.result.pid) ? run.processes[1]
                                                                                      : run.processes[0];
  // The child waited for the parent's hold: a holder in another process blames nobody.
  EXPECT_GE(child.total(&ThreadLocks::wait_ns), 10000000u / 2);
  EXPECT_EQ(child.total(&ThreadLocks::blame_ns), 0u);
  EXPECT_EQ(child.total(&ThreadLocks::contended), 1u);
}

TEST(LockBlameE2E, AgentInternalLocksStayOut) {
  const LockRun run = RunLockProgram("threads");
  const Process& p = run.processes.at(0);
  ExpectConservation(p);
  EXPECT_GE(p.total(&ThreadLocks::acquisitions), 400u) << "the program's own locks are counted";
  for (const auto& [key, l] : p.locks) {
    if (key.first == 0) continue;
    EXPECT_EQ(p.modules.at(key.first).path().find("libcilkprof_agent"), std::string::npos);
  }
  for (const auto& [tid, t] : p.threads) {
    for (const auto& [id, n] : t.nodes) {
      if (n.kind() != wire::FRAME_LOCK || n.module_id() == 0) continue;
      EXPECT_EQ(p.modules.at(n.module_id()).path().find("libcilkprof_agent"), std::string::npos);
    }
  }
}

}  // namespace
