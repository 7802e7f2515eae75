// A process that execs is one profile: Session::FoldExecPredecessor, and the server's
// chaining of the connections of one pid (server.h, "Exec chains"), over real sockets.
// Expected trees are the sums of the images' trees, computed here path by path.
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>

#include "cilkprof/aggregator/output_naming.h"
#include "cilkprof/aggregator/profile_io.h"
#include "cilkprof/aggregator/server.h"
#include "fake_agent.h"
#include "profile_paths.h"
#include "temp_dir.h"

namespace cilkprof::aggregator {
namespace {

using namespace testing;  // NOLINT: the builders
using Paths = std::map<std::string, std::vector<double>>;
using Stream = std::vector<wire::AgentMessage>;
using std::chrono::milliseconds;

constexpr milliseconds kDrain{60000};  // never expires in these tests

// `stream` as another image: executable `exe`, ending with Goodbye `reason` (none: "").
// The images of one process are told apart by their start times, as the agent's are.
Stream AsImage(Stream stream, const std::string& exe, const std::string& reason,
               uint32_t ppid = 1, uint64_t start_unix_ns = 1000000000) {
  wire::Hello* hello = stream.front().mutable_hello();
  hello->set_executable(exe);
  hello->set_argv(0, exe);
  hello->set_ppid(ppid);
  hello->set_start_unix_ns(start_unix_ns);
  if (stream.back().has_goodbye()) stream.pop_back();
  if (!reason.empty()) stream.push_back(Goodbye(reason));
  return stream;
}

// The paths of several profiles added up (the two images' trees in one).
Paths Summed(const std::vector<profile::Profile>& profiles) {
  Paths out;
  for (const auto& p : profiles) {
    for (const auto& [path, values] : PathsOf(p)) {
      std::vector<double>& sum = out[path];
      if (sum.size() < values.size()) sum.resize(values.size(), 0.0);
      for (size_t i = 0; i < values.size(); ++i) sum[i] += values[i];
    }
  }
  return out;
}

Session Applied(const Stream& stream) {
  Session session;
  for (const auto& m : stream) EXPECT_TRUE(session.Apply(m).ok());
  return session;
}

TEST(ExecFoldTest, TheEarlierImageJoinsTreeThreadsAndChain) {
  const Stream before = AsImage(SyntheticAgentStream(42, 1, 3, 2), "/usr/bin/env", "exec", 1, 500);
  const Stream after = AsImage(SyntheticAgentStream(42, 2, 4, 3), "/opt/bin/app", "exit", 1, 900);
  Session earlier = Applied(before);
  Session later = Applied(after);
  ASSERT_TRUE(earlier.ended_by_exec());
  ASSERT_FALSE(later.ended_by_exec());
  ASSERT_TRUE(later.FoldExecPredecessor(earlier).ok());

  FakeSymbolSource symbols;
  const profile::Profile p = later.BuildProfile(symbols, 0);
  const profile::Profile p_before = ExpectedProfile(before);
  const profile::Profile p_after = ExpectedProfile(after);
  EXPECT_EQ(PathsOf(p), Summed({p_before, p_after}));
  EXPECT_EQ(p.totals().samples(), p_before.totals().samples() + p_after.totals().samples());
  // The streams' threads have the same keys (thread_index, tid): one thread each, summed.
  ASSERT_EQ(p.threads_size(), 3);
  for (const auto& thread : p.threads()) {
    uint64_t want = 0;
    for (const auto* q : {&p_before, &p_after}) {
      for (const auto& t : q->threads()) {
        if (t.tid() == thread.tid()) want += t.counters().samples();
      }
    }
    EXPECT_EQ(thread.counters().samples(), want) << thread.tid();
  }
  EXPECT_EQ(p.process().executable(), "/opt/bin/app");
  EXPECT_EQ(p.process().start_unix_ns(), 500u);  // the process began with its first image
  ASSERT_EQ(p.process().exec_chain_size(), 1);
  EXPECT_EQ(p.process().exec_chain(0).executable(), "/usr/bin/env");
  EXPECT_EQ(p.process().exec_chain(0).samples(), p_before.totals().samples());
  EXPECT_EQ(p.process().exec_chain(0).end_unix_ns(), 3000000000u);
  auto reread = DecodeProfileFile("built", EncodeProfileFile(p));
  EXPECT_TRUE(reread.ok()) << reread.status().message();
}

TEST(ExecFoldTest, ThreadsOnlyInTheEarlierImageAreKeptAsExited) {
  Stream before = AsImage(SyntheticAgentStream(43, 3, 2, 1), "/bin/sh", "exec");
  wire::AgentMessage extra;
  wire::ThreadDelta* t = AddThread(extra.mutable_delta(), 777, 9, "helper");
  AddCounters(t, 4);
  before.insert(before.end() - 1, extra);
  Session later = Applied(AsImage(SyntheticAgentStream(43, 4, 2, 1), "/opt/bin/app", "exit"));
  ASSERT_TRUE(later.FoldExecPredecessor(Applied(before)).ok());
  FakeSymbolSource symbols;
  const profile::Profile p = later.BuildProfile(symbols, 0);
  ASSERT_EQ(p.threads_size(), 2);
  const profile::ThreadInfo& helper = p.threads(1);
  EXPECT_EQ(helper.tid(), 777u);
  EXPECT_EQ(helper.name(), "helper");
  EXPECT_TRUE(helper.exited());
  EXPECT_EQ(helper.counters().samples(), 4u);
}

TEST(ExecFoldTest, ChainsOfThreeKeepTheirOrder) {
  Session first = Applied(AsImage(SyntheticAgentStream(44, 5, 1, 1), "/usr/bin/env", "exec"));
  Session second = Applied(AsImage(SyntheticAgentStream(44, 6, 1, 1), "/usr/bin/bash", "exec"));
  Session third = Applied(AsImage(SyntheticAgentStream(44, 7, 1, 1), "/usr/bin/python3", "exit"));
  ASSERT_TRUE(second.FoldExecPredecessor(first).ok());
  ASSERT_TRUE(third.FoldExecPredecessor(second).ok());
  ASSERT_EQ(third.exec_chain().size(), 2u);
  EXPECT_EQ(third.exec_chain()[0].executable(), "/usr/bin/env");
  EXPECT_EQ(third.exec_chain()[1].executable(), "/usr/bin/bash");
}

TEST(ExecFoldTest, ImagesSampledDifferentlyAreRefusedAndNothingChanges) {
  Stream other_period = AsImage(SyntheticAgentStream(45, 8), "/usr/bin/env", "exec");
  other_period.front().mutable_hello()->set_period_ns(250000);
  Stream other_metrics = AsImage(SyntheticAgentStream(45, 9), "/usr/bin/env", "exec");
  other_metrics.front().mutable_hello()->mutable_metrics(1)->set_name("wall");
  const Stream after = AsImage(SyntheticAgentStream(45, 10), "/opt/bin/app", "exit");
  Session later = Applied(after);
  const Status period = later.FoldExecPredecessor(Applied(other_period));
  EXPECT_FALSE(period.ok());
  EXPECT_NE(period.message().find("sampled differently"), std::string::npos) << period.message();
  EXPECT_FALSE(later.FoldExecPredecessor(Applied(other_metrics)).ok());
  FakeSymbolSource symbols;
  EXPECT_EQ(PathsOf(later.BuildProfile(symbols, 0)), PathsOf(ExpectedProfile(after)));
  EXPECT_TRUE(later.exec_chain().empty());
}

TEST(ExecFoldTest, RecordedNothing) {
  EXPECT_TRUE(Applied({Hello(46), Goodbye()}).RecordedNothing());
  wire::AgentMessage nodes_only;
  wire::Delta* d = nodes_only.mutable_delta();
  AddModule(d, 1, "/bin/sh");
  AddNode(AddThread(d, 46, 0), 1, 0, 1, 0x10);
  AddCounters(d->mutable_threads(0), 0);
  EXPECT_TRUE(Applied({Hello(46), nodes_only, Goodbye()}).RecordedNothing());
  wire::AgentMessage one_sample = nodes_only;
  AddMetrics(one_sample.mutable_delta()->mutable_threads(0), 1, {1, 1000});
  AddCounters(one_sample.mutable_delta()->mutable_threads(0), 1);
  EXPECT_FALSE(Applied({Hello(46), one_sample, Goodbye()}).RecordedNothing());
  wire::AgentMessage idle_only;
  AddThread(idle_only.mutable_delta(), 46, 0)->mutable_counters()->set_idle_samples(2);
  EXPECT_FALSE(Applied({Hello(46), idle_only, Goodbye()}).RecordedNothing());
  Session dropped = Applied({Hello(46)});
  dropped.MarkDropped("garbage");
  EXPECT_FALSE(dropped.RecordedNothing());
}

class ExecChainServerTest : public ::testing::Test {
 protected:
  std::unique_ptr<Aggregator> StartServer(milliseconds successor_wait = milliseconds(600000),
                                          bool skip_empty = false) {
    AggregatorOptions options;
    options.unix_socket_path = socket_path_;
    options.output_path = [dir = dir_.path()](const ProcessKey& key) { return UniqueProfilePath(dir, key); };
    options.on_written = [this](const WrittenProfile& w) {
      std::lock_guard lock(mutex_);
      callbacks_.push_back(w);
      written_.notify_all();
    };
    options.exec_successor_wait = successor_wait;
    options.skip_empty_profiles = skip_empty;
    auto started = Aggregator::Start(std::move(options), FakeSymbols());
    EXPECT_TRUE(started.ok()) << started.status().message();
    return started.ok() ? std::move(*started) : nullptr;
  }

  void SendAll(const Stream& stream) {
    ClientSocket agent(socket_path_);
    ASSERT_TRUE(agent.connected());
    ASSERT_TRUE(agent.Send(Frames(stream), 97));
  }

  static profile::Profile Read(const WrittenProfile& w) {
    auto read = ReadProfileFile(w.path);
    EXPECT_TRUE(read.ok()) << w.path << ": " << read.status().message();
    return read.ok() ? *read : profile::Profile();
  }

  TempDir dir_;
  std::string socket_path_ = dir_.File("agg.sock");
  std::mutex mutex_;
  std::condition_variable written_;
  std::vector<WrittenProfile> callbacks_;
};

TEST_F(ExecChainServerTest, ShimThenProgramIsOneProfile) {
  auto server = StartServer();
  ASSERT_TRUE(server);
  const Stream env = AsImage(SyntheticAgentStream(7001, 1), "/usr/bin/env", "exec", 1, 100);
  const Stream bash = AsImage(SyntheticAgentStream(7001, 2), "/usr/bin/bash", "exec", 1, 200);
  const Stream app = AsImage(SyntheticAgentStream(7001, 3), "/opt/bin/app", "exit", 1, 300);
  SendAll(env);
  SendAll(bash);
  SendAll(app);
  const auto written = server->Finish(kDrain);
  ASSERT_EQ(written.size(), 1u);
  const WrittenProfile& w = written[0];
  ASSERT_TRUE(w.status.ok()) << w.status.message();
  EXPECT_EQ(w.path, dir_.File("app.7001.cilkprof"));
  EXPECT_EQ(w.process.sequence, 0u);  // the first image's connection: `cilkprof run` names it the main profile
  EXPECT_EQ(w.process.executable, "/opt/bin/app");
  EXPECT_EQ(w.process.exec_chain, (std::vector<std::string>{"/usr/bin/env", "/usr/bin/bash"}));
  const profile::Profile p = Read(w);
  EXPECT_EQ(PathsOf(p), Summed({ExpectedProfile(env), ExpectedProfile(bash), ExpectedProfile(app)}));
  EXPECT_EQ(p.process().end_reason(), "exit");
  EXPECT_EQ(p.process().exec_chain_size(), 2);
}

TEST_F(ExecChainServerTest, ImageThatEndsBeforeTheOneItExecdFromStillJoins) {
  auto server = StartServer();
  ASSERT_TRUE(server);
  const Stream env = AsImage(SyntheticAgentStream(7002, 4), "/usr/bin/env", "exec", 1, 100);
  const Stream app = AsImage(SyntheticAgentStream(7002, 5), "/opt/bin/app", "exit", 1, 200);
  {
    // The first image's last bytes are still on their way when the new image ends.
    ClientSocket first(socket_path_);
    ASSERT_TRUE(first.connected());
    const Stream head(env.begin(), env.end() - 2);
    const Stream tail(env.end() - 2, env.end());
    ASSERT_TRUE(first.Send(Frames(head)));
    SendAll(app);
    ASSERT_TRUE(first.Send(FrameBytes(tail)));
  }
  const auto written = server->Finish(kDrain);
  ASSERT_EQ(written.size(), 1u);
  EXPECT_EQ(written[0].process.exec_chain, std::vector<std::string>{"/usr/bin/env"});
  EXPECT_EQ(PathsOf(Read(written[0])), Summed({ExpectedProfile(env), ExpectedProfile(app)}));
}

TEST_F(ExecChainServerTest, ExecIntoAProgramWithoutTheAgentIsWrittenAfterTheWait) {
  auto server = StartServer(milliseconds(1));
  ASSERT_TRUE(server);
  const Stream env = AsImage(SyntheticAgentStream(7003, 6), "/usr/bin/env", "exec");
  SendAll(env);
  {
    // Written by the timer, before Finish.
    std::unique_lock lock(mutex_);
    ASSERT_TRUE(written_.wait_for(lock, kDrain, [&] { return !callbacks_.empty(); }));
  }
  const auto written = server->Finish(kDrain);
  ASSERT_EQ(written.size(), 1u);
  const profile::Profile p = Read(written[0]);
  EXPECT_EQ(p.process().end_reason(), "exec");
  EXPECT_EQ(p.process().executable(), "/usr/bin/env");
  EXPECT_EQ(PathsOf(p), PathsOf(ExpectedProfile(env)));
}

TEST_F(ExecChainServerTest, FinishWritesAnImageStillWaitingForItsSuccessor) {
  auto server = StartServer();
  ASSERT_TRUE(server);
  SendAll(AsImage(SyntheticAgentStream(7004, 7), "/usr/bin/env", "exec"));
  const auto written = server->Finish(kDrain);
  ASSERT_EQ(written.size(), 1u);
  EXPECT_EQ(Read(written[0]).process().end_reason(), "exec");
}

TEST_F(ExecChainServerTest, PidReusedByAnotherParentIsAnotherProcess) {
  auto server = StartServer();
  ASSERT_TRUE(server);
  SendAll(AsImage(SyntheticAgentStream(7005, 8), "/usr/bin/env", "exec", /*ppid=*/1, 100));
  SendAll(AsImage(SyntheticAgentStream(7005, 9), "/opt/bin/app", "exit", /*ppid=*/2, 200));
  const auto written = server->Finish(kDrain);
  ASSERT_EQ(written.size(), 2u);
  for (const auto& w : written) EXPECT_TRUE(w.process.exec_chain.empty());
}

TEST_F(ExecChainServerTest, AnImageThatExitedStartsNoChain) {
  auto server = StartServer();
  ASSERT_TRUE(server);
  SendAll(AsImage(SyntheticAgentStream(7006, 10), "/opt/bin/app", "exit", 1, 100));
  SendAll(AsImage(SyntheticAgentStream(7006, 11), "/opt/bin/app", "exit", 1, 200));
  EXPECT_EQ(server->Finish(kDrain).size(), 2u);
}

TEST_F(ExecChainServerTest, ImagesThatCannotShareAProfileAreWrittenApart) {
  auto server = StartServer();
  ASSERT_TRUE(server);
  Stream env = AsImage(SyntheticAgentStream(7007, 12), "/usr/bin/env", "exec", 1, 100);
  env.front().mutable_hello()->set_clock("wall");
  SendAll(env);
  SendAll(AsImage(SyntheticAgentStream(7007, 13), "/opt/bin/app", "exit", 1, 200));
  const auto written = server->Finish(kDrain);
  ASSERT_EQ(written.size(), 2u);
  std::set<std::string> executables;
  for (const auto& w : written) executables.insert(Read(w).process().executable());
  EXPECT_EQ(executables, (std::set<std::string>{"/usr/bin/env", "/opt/bin/app"}));
}

TEST_F(ExecChainServerTest, ProcessesThatRecordedNothingAreListedNotWritten) {
  auto server = StartServer(milliseconds(600000), /*skip_empty=*/true);
  ASSERT_TRUE(server);
  SendAll({Hello(7101, "/bin/sh"), Goodbye()});  // the program itself: always written
  SendAll(AsImage({Hello(7102), Goodbye()}, "/bin/sh", "exec", 1, 100));
  SendAll(AsImage({Hello(7102), Goodbye()}, "/usr/bin/readlink", "exit", 1, 200));
  SendAll(SyntheticAgentStream(7103, 14));
  const auto written = server->Finish(kDrain);
  ASSERT_EQ(written.size(), 3u);
  std::map<uint32_t, const WrittenProfile*> by_pid;
  for (const auto& w : written) by_pid[w.process.pid] = &w;
  EXPECT_FALSE(by_pid.at(7101)->path.empty());
  EXPECT_FALSE(by_pid.at(7101)->recorded_nothing);
  EXPECT_TRUE(by_pid.at(7102)->recorded_nothing);
  EXPECT_TRUE(by_pid.at(7102)->path.empty());
  EXPECT_TRUE(by_pid.at(7102)->status.ok());
  EXPECT_EQ(by_pid.at(7102)->process.executable, "/usr/bin/readlink");
  EXPECT_EQ(by_pid.at(7102)->process.exec_chain, std::vector<std::string>{"/bin/sh"});
  EXPECT_FALSE(by_pid.at(7103)->recorded_nothing);
  EXPECT_EQ(dir_.File("synthetic.7103.cilkprof"), by_pid.at(7103)->path);
  std::lock_guard lock(mutex_);
  EXPECT_EQ(callbacks_.size(), 2u);  // on_written hears of files only
}

// A process the program forked (a wrapper's $(...) subshell) can connect before the
// program does: the program is the pid it was started as, not the first connection.
TEST_F(ExecChainServerTest, TheProgramIsKnownByItsPidNotByWhoConnectsFirst) {
  auto server = StartServer(milliseconds(600000), /*skip_empty=*/true);
  ASSERT_TRUE(server);
  server->SetProgramPid(7201);
  SendAll({Hello(7202, "/bin/dash"), Goodbye()});  // the subshell, first and empty: left out
  SendAll({Hello(7201, "/bin/sh"), Goodbye()});    // the program, empty: still written
  const auto written = server->Finish(kDrain);
  ASSERT_EQ(written.size(), 2u);
  std::map<uint32_t, const WrittenProfile*> by_pid;
  for (const auto& w : written) by_pid[w.process.pid] = &w;
  EXPECT_TRUE(by_pid.at(7202)->recorded_nothing);
  EXPECT_TRUE(by_pid.at(7202)->path.empty());
  EXPECT_FALSE(by_pid.at(7201)->recorded_nothing);
  EXPECT_FALSE(by_pid.at(7201)->path.empty());
}

}  // namespace
}  // namespace cilkprof::aggregator
