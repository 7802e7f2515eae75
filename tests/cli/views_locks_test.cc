// Lock blame in the views (issue 14): FRAME_LOCK nodes folded into the three views, the
// locks view and its renderers, the summary's lock lines, effort with lock_wait. On the
// synthetic LockProfile (views_test_profile.h): every figure below is known exactly.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cilkprof/views/blame_metrics.h"
#include "cilkprof/views/bottom_up.h"
#include "cilkprof/views/build.h"
#include "cilkprof/views/locks.h"
#include "cilkprof/views/summary.h"
#include "cilkprof/views/view_tree.h"
#include "views_test_profile.h"

namespace cilkprof::views {
namespace {

constexpr double kMs = 1e6;

size_t Column(const ViewTree& tree, const std::string& name) {
  for (size_t m = 0; m < tree.metrics.size(); ++m) {
    if (tree.metrics[m].name == name) return m;
  }
  ADD_FAILURE() << "no metric " << name;
  return 0;
}

// The row reached by names from the root (top-down), or nullptr.
const ViewNode* Path(const ViewTree& tree, std::initializer_list<std::string> names) {
  uint32_t at = 0;
  for (const std::string& name : names) {
    bool found = false;
    for (uint32_t c : tree.nodes[at].children) {
      if (tree.nodes[c].name == name) {
        at = c;
        found = true;
        break;
      }
    }
    if (!found) return nullptr;
  }
  return &tree.nodes[at];
}

// The sum of the root's children's exclusive values.
double SumExclusive(const ViewTree& tree, size_t m) {
  double sum = 0;
  for (uint32_t c : tree.nodes[0].children) sum += tree.nodes[c].exclusive[m];
  return sum;
}

TEST(LockFold, TopDownShowsALockLeafUnderTheCallThatWaitedOrReleased) {
  const ViewTree tree = Materialize(BuildTopDown(testing::LockProfile()));
  const size_t wait = Column(tree, "lock_wait"), blame = Column(tree, "lock_blame");
  const ViewNode* held =
      Path(tree, {"main", "worker(int)", "hold_long()", "std::mutex::unlock()", "[lock g_mutex]"});
  ASSERT_NE(held, nullptr);
  EXPECT_EQ(held->kind, RowKind::kLock);
  EXPECT_EQ(RowLabel(*held), "[lock g_mutex]");
  EXPECT_EQ(held->file, "prog.cc");
  EXPECT_EQ(held->line, 5u);
  EXPECT_DOUBLE_EQ(held->exclusive[blame], 60 * kMs);
  EXPECT_DOUBLE_EQ(held->inclusive[blame], 60 * kMs);
  EXPECT_TRUE(held->children.empty());
  const ViewNode* waited =
      Path(tree, {"main", "worker(int)", "wait_here()", "std::mutex::lock()", "pthread_mutex_lock", "[lock g_mutex]"});
  ASSERT_NE(waited, nullptr);
  EXPECT_DOUBLE_EQ(waited->exclusive[wait], 80 * kMs);
  // A heap lock is named by its address.
  const ViewNode* heap = Path(tree, {"main", "[lock 0x7f0000001000]"});
  ASSERT_NE(heap, nullptr);
  EXPECT_DOUBLE_EQ(heap->exclusive[blame], 15 * kMs);
  // The calls above hold the lock time inclusively, none exclusively.
  const ViewNode* unlock = Path(tree, {"main", "worker(int)", "hold_long()", "std::mutex::unlock()"});
  EXPECT_DOUBLE_EQ(unlock->exclusive[blame], 0);
  EXPECT_DOUBLE_EQ(Path(tree, {"main"})->inclusive[wait], 100 * kMs);
  EXPECT_DOUBLE_EQ(tree.program_total[wait], 100 * kMs);
}

TEST(LockFold, BottomUpGivesALockNodesValuesToItsCaller) {
  BuildOptions options;
  options.lock_mode = LockMode::kFoldIntoCaller;
  const RowTree top_down = BuildTopDown(testing::LockProfile(), options);
  const ViewTree tree = Materialize(BottomUp(top_down));
  const size_t wait = Column(tree, "lock_wait"), blame = Column(tree, "lock_blame");
  for (const ViewNode& n : tree.nodes) EXPECT_NE(n.kind, RowKind::kLock) << n.name;
  const ViewNode* lock_call = Path(tree, {"pthread_mutex_lock"});
  ASSERT_NE(lock_call, nullptr);
  EXPECT_DOUBLE_EQ(lock_call->exclusive[wait], 80 * kMs);
  const ViewNode* unlock = Path(tree, {"std::mutex::unlock()"});
  ASSERT_NE(unlock, nullptr);
  EXPECT_DOUBLE_EQ(unlock->exclusive[blame], 60 * kMs);
  EXPECT_DOUBLE_EQ(Path(tree, {"std::mutex::unlock()", "hold_long()"})->inclusive[blame], 60 * kMs);
  EXPECT_DOUBLE_EQ(Path(tree, {"worker(int)"})->exclusive[wait], 20 * kMs);
  EXPECT_DOUBLE_EQ(Path(tree, {"main"})->exclusive[blame], 15 * kMs);
  EXPECT_DOUBLE_EQ(SumExclusive(tree, wait), 100 * kMs);  // the functions: each lock node once
}

TEST(LockFold, FlatGivesALockNodesValuesToItsCallersLine) {
  const ViewTree tree = Materialize(BuildFlat(testing::LockProfile()));
  const size_t wait = Column(tree, "lock_wait"), blame = Column(tree, "lock_blame");
  for (const ViewNode& n : tree.nodes) EXPECT_NE(n.kind, RowKind::kLock) << n.name;
  const ViewNode* line = Path(tree, {"/bin/prog", "prog.cc", "worker(int)", "worker(int)"});
  ASSERT_NE(line, nullptr);
  // worker's own lines: 31 (no lock time) and 32 (the heap lock's wait).
  double wait_at_32 = -1;
  for (uint32_t c : Path(tree, {"/bin/prog", "prog.cc", "worker(int)"})->children) {
    if (tree.nodes[c].line == 32) wait_at_32 = tree.nodes[c].exclusive[wait];
  }
  EXPECT_DOUBLE_EQ(wait_at_32, 20 * kMs);
  EXPECT_DOUBLE_EQ(Path(tree, {"/lib/x86_64-linux-gnu/libc.so.6"})->exclusive[wait], 80 * kMs);
  EXPECT_DOUBLE_EQ(Path(tree, {"/bin/prog", "std_mutex.h", "std::mutex::unlock()"})->exclusive[blame], 60 * kMs);
  // Inclusive values count each lock node once, however many rows its path has.
  EXPECT_DOUBLE_EQ(Path(tree, {"/bin/prog", "prog.cc", "worker(int)"})->inclusive[wait], 100 * kMs);
  EXPECT_DOUBLE_EQ(Path(tree, {"/bin/prog", "prog.cc", "main"})->inclusive[blame], 75 * kMs);
}

TEST(LockFold, EffortIncludesLockWait) {
  const RowTree tree = BuildTopDown(testing::LockProfile());
  const MetricColumns& metrics = tree.metrics();
  const size_t effort = metrics.Find(kEffortMetric);
  ASSERT_LT(effort, metrics.size());
  EXPECT_NE(metrics[effort].description.find("+ lock_wait"), std::string::npos);
  const ViewTree view = Materialize(tree);
  EXPECT_DOUBLE_EQ(view.program_total[effort], 300 * kMs);
  EXPECT_DOUBLE_EQ(view.program_total[metrics.Find(kIdlenessPercentMetric)], 100.0 * 20 / 300);
  // A lock row's effort is its wait.
  EXPECT_DOUBLE_EQ(Path(view, {"main", "worker(int)", "wait_here()", "std::mutex::lock()", "pthread_mutex_lock",
                               "[lock g_mutex]"})->exclusive[effort],
                   80 * kMs);
  // Profiles without lock metrics keep effort = work + idleness + overhead.
  const RowTree old = BuildTopDown(testing::BlameProfile());
  EXPECT_EQ(old.metrics()[old.metrics().Find(kEffortMetric)].description.find("lock_wait"), std::string::npos);
  EXPECT_DOUBLE_EQ(Materialize(old).program_total[old.metrics().Find(kEffortMetric)], 400 * kMs);
}

TEST(LockFold, LockMetricSortsTheView) {
  const RowTree tree = BuildTopDown(testing::LockProfile());
  ViewOptions options;
  options.metric = tree.metrics().Find("lock_blame");
  options.threshold_percent = 1;
  const ViewTree view = Materialize(tree, options);
  // Sorted by lock_blame: under main, worker (60) before the heap lock (15), and rows
  // without lock_blame are hidden by the threshold.
  const ViewNode& main = view.nodes[view.nodes[0].children.at(0)];
  ASSERT_EQ(main.children.size(), 2u);
  EXPECT_EQ(view.nodes[main.children[0]].name, "worker(int)");
  EXPECT_EQ(view.nodes[main.children[1]].name, "[lock 0x7f0000001000]");
}

TEST(LocksView, OneRowPerLockHottestFirstWithHoldersAndWaiters) {
  auto rows = LockRows(testing::LockProfile());
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), 2u);
  const LockRow& g = (*rows)[0];
  EXPECT_EQ(g.identity.name, "g_mutex");
  EXPECT_TRUE(g.identity.named);
  EXPECT_EQ(g.file, "prog.cc");
  EXPECT_EQ(g.line, 5u);
  EXPECT_EQ(g.kind, "mutex");
  EXPECT_EQ(g.contended, 40u);
  EXPECT_DOUBLE_EQ(g.wait_ns, 80 * kMs);
  EXPECT_DOUBLE_EQ(g.blame_ns, 60 * kMs);
  EXPECT_DOUBLE_EQ(g.blame_share, 0.75);
  EXPECT_DOUBLE_EQ(g.wait_share, 0.8);
  ASSERT_EQ(g.holders.size(), 1u);
  // The lock library's frames (inlined std::mutex::unlock, libc's pthread_mutex_lock)
  // are skipped: the contexts start at the user's code.
  EXPECT_EQ(g.holders[0].frames, "hold_long() (prog.cc:22) <- worker(int) (prog.cc:31) <- main (prog.cc:10)");
  EXPECT_EQ(g.holders[0].function, "hold_long()");
  EXPECT_DOUBLE_EQ(g.holders[0].value, 60 * kMs);
  EXPECT_DOUBLE_EQ(g.holders[0].share, 1.0);
  ASSERT_EQ(g.waiters.size(), 1u);
  EXPECT_EQ(g.waiters[0].frames, "wait_here() (prog.cc:41) <- worker(int) (prog.cc:31) <- main (prog.cc:10)");

  const LockRow& heap = (*rows)[1];
  EXPECT_EQ(heap.identity.name, "0x7f0000001000");
  EXPECT_FALSE(heap.identity.named);
  EXPECT_EQ(heap.kind, "spin");
  EXPECT_EQ(heap.timeouts, 2u);
  // No declaration: where it was waited for most.
  EXPECT_EQ(heap.file, "prog.cc");
  EXPECT_EQ(heap.line, 32u);
  ASSERT_EQ(heap.holders.size(), 1u);
  EXPECT_EQ(heap.holders[0].frames, "main (prog.cc:10)");
}

TEST(LocksView, TextJsonAndCsv) {
  auto rows = LockRows(testing::LockProfile());
  ASSERT_TRUE(rows.ok());
  const std::string text = RenderLocksText(*rows, 3);
  EXPECT_EQ(text.rfind("wait (ms)  wait %  blame (ms)  blame/wait  acquisitions  contended  timeouts  kind   lock", 0),
            0u)
      << text;
  // Acquisitions are an estimate ("~"), unknown ("-") when the profile has none.
  EXPECT_NE(text.find("     80.0   80.0%        60.0       75.0%         ~1200         40         0  mutex  g_mutex    "
                      "     prog.cc:5\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("75.0%             -         10         2  spin"), std::string::npos) << text;
  EXPECT_NE(text.find("g_mutex (mutex, prog.cc:5):\n  holders, by blame"), std::string::npos) << text;
  EXPECT_NE(text.find("    100.0%  60.0 ms  hold_long() (prog.cc:22) <- worker(int) (prog.cc:31) <- main (prog.cc:10)\n"),
            std::string::npos)
      << text;

  const auto json = nlohmann::json::parse(RenderLocksJson(*rows));
  ASSERT_EQ(json.size(), 2u);
  EXPECT_EQ(json[0]["lock"], "g_mutex");
  EXPECT_EQ(json[0]["kind"], "mutex");
  EXPECT_DOUBLE_EQ(json[0]["blame_percent"].get<double>(), 75.0);
  EXPECT_EQ(json[0]["holders"][0]["function"], "hold_long()");
  EXPECT_EQ(json[0]["holders"][0]["line"], 22);
  EXPECT_DOUBLE_EQ(json[0]["waiters"][0]["value_ns"].get<double>(), 80 * kMs);
  EXPECT_EQ(json[1]["timeouts"], 2);
  EXPECT_EQ(json[0]["acquisitions"], 1200);
  EXPECT_EQ(json[1]["acquisitions"], 0);

  const std::string csv = RenderLocksCsv(*rows);
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "lock,file,line,kind,contended,wait_ns,blame_ns,blame_percent,timeouts,top_holder,top_holder_blame_ns,"
            "top_waiter,top_waiter_wait_ns,acquisitions");
  EXPECT_NE(csv.find("\ng_mutex,prog.cc,5,mutex,40,80000000,60000000,75,0,hold_long() (prog.cc:22) <- worker(int) "
                     "(prog.cc:31) <- main (prog.cc:10),60000000,"),
            std::string::npos)
      << csv;
}

TEST(LocksView, FocusMatchesNamesAndContexts) {
  auto rows = LockRows(testing::LockProfile());
  ASSERT_TRUE(rows.ok());
  auto by_name = *rows;
  ASSERT_TRUE(FocusLocks(&by_name, "^g_").ok());
  ASSERT_EQ(by_name.size(), 1u);
  EXPECT_EQ(by_name[0].identity.name, "g_mutex");
  auto by_context = *rows;
  ASSERT_TRUE(FocusLocks(&by_context, "wait_here").ok());
  ASSERT_EQ(by_context.size(), 1u);
  EXPECT_EQ(by_context[0].identity.name, "g_mutex");
  auto both = *rows;
  ASSERT_TRUE(FocusLocks(&both, "main").ok());
  EXPECT_EQ(both.size(), 2u);
  auto none = *rows;
  const Status missing = FocusLocks(&none, "nothing_like_it");
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("no lock's name or holder or waiter context matches"), std::string::npos);
  auto bad = *rows;
  EXPECT_NE(FocusLocks(&bad, "(").message().find("not a valid regular expression"), std::string::npos);
}

TEST(LocksView, ThresholdHidesLocksUnderAShareOfTheWait) {
  auto rows = LockRows(testing::LockProfile());
  ASSERT_TRUE(rows.ok());
  auto all = *rows;
  ThresholdLocks(&all, 0);
  EXPECT_EQ(all.size(), 2u);
  auto at = *rows;
  ThresholdLocks(&at, 20);  // the heap lock is exactly 20%: kept
  EXPECT_EQ(at.size(), 2u);
  auto above = *rows;
  ThresholdLocks(&above, 20.5);
  ASSERT_EQ(above.size(), 1u);
  EXPECT_EQ(above[0].identity.name, "g_mutex");
}

TEST(LocksView, AProfileWithoutLocksSaysWhatToDo) {
  auto rows = LockRows(testing::BlameProfile());
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.status().message().rfind("has no lock data: no thread waited for a pthread mutex", 0), 0u)
      << rows.status().message();
  EXPECT_NE(rows.status().message().find("cilkprof run"), std::string::npos);
}

TEST(LockSummary, LinesConservationAndInterpretation) {
  const ProfileSummary s = Summarize(testing::LockProfile(), "l.cilkprof", 5);
  ASSERT_TRUE(s.locks.present);
  EXPECT_DOUBLE_EQ(s.locks.effort_percent, 100.0 / 3);
  EXPECT_EQ(s.locks.locks, 2u);
  EXPECT_EQ(s.locks.worst_lock, "g_mutex");
  EXPECT_EQ(s.locks.worst_holder.function, "hold_long()");
  EXPECT_EQ(s.locks.interpretation, "shrink or split the critical section at hold_long() (prog.cc:22)");
  EXPECT_DOUBLE_EQ(s.blame.effort, 300 * kMs);
  const std::string text = RenderSummaryText(s);
  EXPECT_NE(text.find("Effort           300.0 ms (work + idleness + overhead + lock_wait)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("Locks            33.3% of effort waiting for 2 contended locks (50 contended acquisitions); "
                      "worst g_mutex (prog.cc:5), 80.0 ms waited, held up most at hold_long() (prog.cc:22) (100.0% "
                      "of its blame); see `cilkprof view locks`\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Lock blame       75.0 ms of 100.0 ms waited (25.0 ms hand-off, 0 open)\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("Interpretation   shrink or split the critical section at hold_long() (prog.cc:22)\n"),
            std::string::npos)
      << text;
  // No "[lock X]" among the top functions: lock time is its callers'.
  EXPECT_EQ(text.find("[lock"), std::string::npos) << text;

  const auto json = nlohmann::json::parse(RenderSummaryJson(s, testing::LockProfile()));
  ASSERT_TRUE(json.contains("locks"));
  EXPECT_DOUBLE_EQ(json["locks"]["wait_ns"].get<double>(), 100 * kMs);
  EXPECT_DOUBLE_EQ(json["locks"]["unblamed_ns"].get<double>(), 25 * kMs);
  EXPECT_EQ(json["locks"]["worst_lock"]["lock"], "g_mutex");
  EXPECT_EQ(json["locks"]["worst_holder"]["function"], "hold_long()");
  EXPECT_EQ(json["locks"]["interpretation"], "shrink or split the critical section at hold_long() (prog.cc:22)");
  EXPECT_DOUBLE_EQ(json["lock_wait"].get<double>(), 100 * kMs);
}

TEST(LockSummary, NoInterpretationUnderTheThresholdAndNoLinesWithoutLocks) {
  profile::Profile p = testing::LockProfile();
  // Lock waits 10 of 210 ms of effort (under 10%): the lines stay, the advice goes.
  for (auto& node : *p.mutable_nodes()) {
    if (node.kind() == wire::FRAME_LOCK && node.exclusive_size() > 4) {
      node.set_exclusive(4, node.exclusive(4) / 10);
    }
  }
  const ProfileSummary s = Summarize(p, "l.cilkprof", 5);
  EXPECT_LT(s.locks.effort_percent, kHighLockWaitPercent);
  EXPECT_TRUE(s.locks.interpretation.empty());
  EXPECT_EQ(RenderSummaryText(s).find("shrink or split"), std::string::npos);

  const ProfileSummary old = Summarize(testing::BlameProfile(), "b.cilkprof", 5);
  EXPECT_FALSE(old.locks.present);
  const std::string text = RenderSummaryText(old);
  EXPECT_EQ(text.find("Locks"), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(RenderSummaryJson(old, testing::BlameProfile())).count("locks"), 0u);
}

}  // namespace
}  // namespace cilkprof::views
