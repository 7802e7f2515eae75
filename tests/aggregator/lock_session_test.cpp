// Session, issue 14 (lock blame): FRAME_LOCK leaves merged like code and symbolized as
// data, LockDelta per-lock totals, the ThreadCounters lock fields in Totals, the
// lock_wait and lock_blame metrics, and the protocol errors of all of it.
#include <gtest/gtest.h>

#include "cilkprof/aggregator/profile_io.h"
#include "cilkprof/aggregator/session.h"
#include "profile_paths.h"
#include "wire_builders.h"

namespace cilkprof::aggregator {
namespace {

using namespace testing;  // NOLINT: the builders
using Paths = std::map<std::string, std::vector<double>>;

constexpr uint64_t kQueueMutex = 0x4040;  // a global lock in /bin/app's .bss
constexpr uint64_t kPoolMutex = 0x4100;

// The agent's Hello with its eight metrics: the six of before, then lock_wait and
// lock_blame (indexes 6 and 7).
wire::AgentMessage LockHello(uint32_t pid) {
  wire::AgentMessage m = Hello(pid);
  wire::Hello* h = m.mutable_hello();
  for (const char* name : {"idleness", "overhead", "probes", "instrumentation", "lock_wait", "lock_blame"}) {
    wire::MetricDescriptor* metric = h->add_metrics();
    metric->set_name(name);
    metric->set_unit(std::string(name) == "probes" ? "count" : "ns");
  }
  return m;
}

profile::Profile Build(const Session& session, std::map<std::pair<std::string, uint64_t>, int>* calls = nullptr) {
  FakeSymbolSource symbols(calls);
  profile::Profile p = session.BuildProfile(symbols, 2000000000);
  auto reread = DecodeProfileFile("built", EncodeProfileFile(p));
  EXPECT_TRUE(reread.ok()) << reread.status().message();
  return p;
}

// Thread 100 waited for the queue mutex in push (0x20 under main's 0x10); thread 101
// held it and released it in pop (0x30), and waited for a heap lock.
wire::AgentMessage ContentionDelta() {
  wire::AgentMessage m;
  wire::Delta* d = m.mutable_delta();
  AddModule(d, 1, "/bin/app", "BID");
  wire::ThreadDelta* waiter = AddThread(d, 100, 0, "main");
  AddNode(waiter, 1, 0, 1, 0x10);
  AddNode(waiter, 2, 1, 1, 0x20);
  AddNode(waiter, 3, 2, 1, kQueueMutex, wire::EDGE_CALL, wire::FRAME_LOCK);
  AddMetrics(waiter, 3, {0, 0, 0, 0, 0, 0, 3e6});
  wire::ThreadCounters* c = waiter->mutable_counters();
  c->set_lock_acquisitions(10);
  c->set_lock_contended(2);
  c->set_lock_wait_ns(3000000);
  c->set_lock_unblamed_ns(500000);
  wire::ThreadDelta* holder = AddThread(d, 101, 1, "worker");
  AddNode(holder, 1, 0, 1, 0x10);
  AddNode(holder, 2, 1, 1, 0x30);
  AddNode(holder, 3, 2, 1, kQueueMutex, wire::EDGE_CALL, wire::FRAME_LOCK);
  AddMetrics(holder, 3, {0, 0, 0, 0, 0, 0, 0, 2.5e6});
  AddNode(holder, 4, 2, 0, 0x7f0000001000, wire::EDGE_CALL, wire::FRAME_LOCK);  // on the heap
  AddMetrics(holder, 4, {0, 0, 0, 0, 0, 0, 1e6});
  c = holder->mutable_counters();
  c->set_lock_acquisitions(5);
  c->set_lock_contended(1);
  c->set_lock_wait_ns(1000000);
  c->set_lock_blame_ns(2500000);
  c->set_lock_unblamed_ns(1000000);
  c->set_lock_wait_open_ns(7);
  AddLock(d, 1, kQueueMutex, 3000000, 2500000, 2);
  AddLock(d, 0, 0x7f0000001000, 1000000, 0, 1, wire::LOCK_SPIN);
  return m;
}

TEST(LockSessionTest, LockLeavesMergeLikeCodeWithTheirMetrics) {
  Session s;
  ASSERT_TRUE(s.Apply(LockHello(42)).ok());
  ASSERT_TRUE(s.Apply(ContentionDelta()).ok());
  // The same context waits again in the next flush: the same merged leaf.
  wire::AgentMessage again;
  wire::ThreadDelta* t = AddThread(again.mutable_delta(), 100, 0);
  AddMetrics(t, 3, {0, 0, 0, 0, 0, 0, 1e6});
  ASSERT_TRUE(s.Apply(again).ok());
  std::map<std::pair<std::string, uint64_t>, int> calls;
  const profile::Profile p = Build(s, &calls);
  ASSERT_EQ(p.metrics_size(), 8);
  EXPECT_EQ(p.metrics(6).name(), "lock_wait");
  EXPECT_EQ(p.metrics(7).name(), "lock_blame");
  const Paths expected = {
      {"<root>", {}},
      {"<root> > app:0x10", {}},
      {"<root> > app:0x10 > app:0x20", {}},
      {"<root> > app:0x10 > app:0x20 > lock:data:app:0x4040", {0, 0, 0, 0, 0, 0, 4e6}},
      {"<root> > app:0x10 > app:0x30", {}},
      {"<root> > app:0x10 > app:0x30 > lock:data:app:0x4040", {0, 0, 0, 0, 0, 0, 0, 2.5e6}},
      {"<root> > app:0x10 > app:0x30 > lock:0x7f0000001000", {0, 0, 0, 0, 0, 0, 1e6}},
  };
  EXPECT_EQ(PathsOf(p), expected);
  // The lock's address was never symbolized as code.
  EXPECT_EQ(calls.count({"/bin/app", kQueueMutex}), 0u);
}

TEST(LockSessionTest, OneDataLocationPerLockSharedByItsNodesAndItsLockEntry) {
  Session s;
  ASSERT_TRUE(s.Apply(LockHello(42)).ok());
  ASSERT_TRUE(s.Apply(ContentionDelta()).ok());
  const profile::Profile p = Build(s);
  std::vector<uint32_t> queue_nodes;
  for (const profile::Node& node : p.nodes()) {
    if (node.kind() == wire::FRAME_LOCK && p.locations(node.location()).offset() == kQueueMutex) {
      queue_nodes.push_back(node.location());
    }
  }
  ASSERT_EQ(queue_nodes.size(), 2u);
  EXPECT_EQ(queue_nodes[0], queue_nodes[1]);
  ASSERT_EQ(p.locks_size(), 2);
  EXPECT_EQ(p.locks(0).location(), queue_nodes[0]);
  const profile::Location& where = p.locations(queue_nodes[0]);
  EXPECT_EQ(p.modules(where.module()).path(), "/bin/app");
  ASSERT_EQ(where.frames_size(), 1);
  EXPECT_EQ(where.frames(0).function(), "data:app:0x4040");
  EXPECT_EQ(where.frames(0).file(), "fake_data.cc");
  // A heap lock is its address.
  const profile::Location& heap = p.locations(p.locks(1).location());
  EXPECT_EQ(heap.module(), 0u);
  EXPECT_EQ(heap.frames(0).function(), "0x7f0000001000");
}

TEST(LockSessionTest, LockTotalsAddUpAcrossDeltasAndModuleIdsHottestFirst) {
  Session s;
  ASSERT_TRUE(s.Apply(LockHello(42)).ok());
  ASSERT_TRUE(s.Apply(ContentionDelta()).ok());
  wire::AgentMessage later;
  wire::Delta* d = later.mutable_delta();
  AddModule(d, 7, "/bin/app", "BID");  // the same file again, under another id
  AddLock(d, 7, kQueueMutex, 500, 400, 1, wire::LOCK_MUTEX, 1);
  AddLock(d, 1, kPoolMutex, 2000000, 2000000, 4, wire::LOCK_RWLOCK);
  ASSERT_TRUE(s.Apply(later).ok());
  const profile::Profile p = Build(s);
  ASSERT_EQ(p.locks_size(), 3);
  auto offset = [&](int i) { return p.locations(p.locks(i).location()).offset(); };
  EXPECT_EQ(offset(0), kQueueMutex);  // 3000500 ns
  EXPECT_EQ(offset(1), kPoolMutex);   // 2000000 ns
  EXPECT_EQ(offset(2), 0x7f0000001000u);
  EXPECT_EQ(p.locks(0).wait_ns(), 3000500u);
  EXPECT_EQ(p.locks(0).blame_ns(), 2500400u);
  EXPECT_EQ(p.locks(0).contended(), 3u);
  EXPECT_EQ(p.locks(0).timeouts(), 1u);
  EXPECT_EQ(p.locks(0).kind(), wire::LOCK_MUTEX);
  EXPECT_EQ(p.locks(1).kind(), wire::LOCK_RWLOCK);
  EXPECT_EQ(p.locks(2).kind(), wire::LOCK_SPIN);
  EXPECT_EQ(p.modules_size(), 2);  // unknown, /bin/app
}

TEST(LockSessionTest, ThreadLockCountersSumIntoTotals) {
  Session s;
  ASSERT_TRUE(s.Apply(LockHello(42)).ok());
  ASSERT_TRUE(s.Apply(ContentionDelta()).ok());
  wire::AgentMessage later;
  AddThread(later.mutable_delta(), 100, 0)->mutable_counters()->set_lock_acquisitions(3);
  ASSERT_TRUE(s.Apply(later).ok());
  const profile::Profile p = Build(s);
  const profile::Totals& t = p.totals();
  EXPECT_EQ(t.lock_acquisitions(), 18u);
  EXPECT_EQ(t.lock_contended(), 3u);
  EXPECT_EQ(t.lock_wait_ns(), 4000000u);
  EXPECT_EQ(t.lock_blame_ns(), 2500000u);
  EXPECT_EQ(t.lock_unblamed_ns(), 1500000u);
  EXPECT_EQ(t.lock_wait_open_ns(), 7u);
  ASSERT_EQ(p.threads_size(), 2);
  EXPECT_EQ(p.threads(0).counters().lock_acquisitions(), 13u);
}

TEST(LockSessionTest, LocksUnderTheRootAndTheMarkersAreAccepted) {
  Session s;
  ASSERT_TRUE(s.Apply(LockHello(42)).ok());
  wire::AgentMessage m;
  AddModule(m.mutable_delta(), 1, "/bin/app");
  wire::ThreadDelta* t = AddThread(m.mutable_delta(), 1, 0);
  AddNode(t, 1, 0, 1, kQueueMutex, wire::EDGE_CALL, wire::FRAME_LOCK);
  AddNode(t, 2, 0, 0, 0, wire::EDGE_CALL, wire::FRAME_PARTIAL_UNWIND);
  AddNode(t, 3, 2, 1, kQueueMutex, wire::EDGE_CALL, wire::FRAME_LOCK);
  AddNode(t, 4, 0, 0, 0, wire::EDGE_CALL, wire::FRAME_ELIDED);
  AddNode(t, 5, 4, 1, kQueueMutex, wire::EDGE_CALL, wire::FRAME_LOCK);
  for (uint32_t id : {1u, 3u, 5u}) AddMetrics(t, id, {0, 0, 0, 0, 0, 0, 1});
  ASSERT_TRUE(s.Apply(m).ok());
  const Paths expected = {{"<root>", {}},
                          {"<root> > lock:data:app:0x4040", {0, 0, 0, 0, 0, 0, 1}},
                          {"<root> > <partial unwind>", {}},
                          {"<root> > <partial unwind> > lock:data:app:0x4040", {0, 0, 0, 0, 0, 0, 1}},
                          {"<root> > <elided>", {}},
                          {"<root> > <elided> > lock:data:app:0x4040", {0, 0, 0, 0, 0, 0, 1}}};
  EXPECT_EQ(PathsOf(Build(s)), expected);
}

TEST(LockSessionTest, LocksOnlyIsNotAnEmptyRecording) {
  Session s;
  ASSERT_TRUE(s.Apply(LockHello(42)).ok());
  wire::AgentMessage m;
  AddLock(m.mutable_delta(), 0, 0x1000, 5);
  ASSERT_TRUE(s.Apply(m).ok());
  EXPECT_FALSE(s.RecordedNothing());
}

// A bad Delta is refused whole: its valid thread and lock entries are not merged.
void ExpectRefused(void (*spoil)(wire::Delta*), const std::string& needle) {
  Session s;
  ASSERT_TRUE(s.Apply(LockHello(42)).ok());
  ASSERT_TRUE(s.Apply(ContentionDelta()).ok());
  const profile::Profile before = Build(s);
  wire::AgentMessage bad;
  wire::Delta* d = bad.mutable_delta();
  wire::ThreadDelta* good = AddThread(d, 100, 0);
  AddNode(good, 20, 2, 1, kPoolMutex, wire::EDGE_CALL, wire::FRAME_LOCK);
  AddMetrics(good, 20, {0, 0, 0, 0, 0, 0, 100});
  AddLock(d, 1, kPoolMutex, 100);
  spoil(d);
  const Status status = s.Apply(bad);
  ASSERT_FALSE(status.ok()) << needle;
  EXPECT_NE(status.message().find(needle), std::string::npos) << status.message();
  const profile::Profile after = Build(s);
  EXPECT_EQ(PathsOf(after), PathsOf(before));
  EXPECT_EQ(after.locks_size(), before.locks_size());
  EXPECT_EQ(after.locks(0).wait_ns(), before.locks(0).wait_ns());
}

TEST(LockSessionTest, ANodeUnderALockIsRefused) {
  // Under a lock of an earlier Delta.
  ExpectRefused([](wire::Delta* d) { AddNode(AddThread(d, 101, 1), 30, 3, 1, 0x50); },
                "node 30 has lock node 3 as its parent");
  // Under a lock of the same Delta, even another lock.
  ExpectRefused([](wire::Delta* d) {
                  wire::ThreadDelta* t = AddThread(d, 101, 1);
                  AddNode(t, 30, 2, 1, kPoolMutex, wire::EDGE_CALL, wire::FRAME_LOCK);
                  AddNode(t, 31, 30, 1, kQueueMutex, wire::EDGE_CALL, wire::FRAME_LOCK);
                },
                "node 31 has lock node 30 as its parent");
}

TEST(LockSessionTest, ALockNodeInAnUnknownModuleIsRefused) {
  ExpectRefused([](wire::Delta* d) {
                  AddNode(AddThread(d, 101, 1), 30, 2, 9, 0x50, wire::EDGE_CALL, wire::FRAME_LOCK);
                },
                "node 30 refers to unknown load module 9");
}

TEST(LockSessionTest, BadLockEntriesAreRefused) {
  ExpectRefused([](wire::Delta* d) { AddLock(d, 9, 0x50, 1); }, "refers to unknown load module 9");
  ExpectRefused([](wire::Delta* d) { AddLock(d, 1, kPoolMutex, 1); }, "two entries in one Delta");
  // 3-5 are OpenMP's lock kinds (issue 17): the first number past the enum's end.
  ExpectRefused([](wire::Delta* d) { AddLock(d, 1, 0x60, 1)->set_kind(static_cast<wire::LockKind>(6)); },
                "unknown lock kind 6");
}

TEST(LockSessionTest, AnExecChainKeepsItsLocksAndCounters) {
  Session earlier, later;
  ASSERT_TRUE(earlier.Apply(LockHello(42)).ok());
  ASSERT_TRUE(earlier.Apply(ContentionDelta()).ok());
  ASSERT_TRUE(earlier.Apply(Goodbye("exec")).ok());
  ASSERT_TRUE(later.Apply(LockHello(42)).ok());
  wire::AgentMessage m;
  AddModule(m.mutable_delta(), 3, "/bin/app", "BID");
  AddLock(m.mutable_delta(), 3, kQueueMutex, 10, 10);
  AddThread(m.mutable_delta(), 100, 0)->mutable_counters()->set_lock_wait_ns(10);
  ASSERT_TRUE(later.Apply(m).ok());
  ASSERT_TRUE(later.Apply(Goodbye()).ok());
  ASSERT_TRUE(later.FoldExecPredecessor(earlier).ok());
  const profile::Profile p = Build(later);
  ASSERT_EQ(p.locks_size(), 2);
  EXPECT_EQ(p.locks(0).wait_ns(), 3000010u);
  EXPECT_EQ(p.locks(0).blame_ns(), 2500010u);
  EXPECT_EQ(p.totals().lock_wait_ns(), 4000010u);
  EXPECT_EQ(p.totals().lock_wait_open_ns(), 7u);
  EXPECT_EQ(PathsOf(p).count("<root> > app:0x10 > app:0x30 > lock:data:app:0x4040"), 1u);
}

}  // namespace
}  // namespace cilkprof::aggregator
