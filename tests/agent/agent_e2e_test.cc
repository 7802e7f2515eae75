// End to end: the real libcilkprof_agent.so preloaded into agent_e2e_program, talking
// to TestReceiver. Bounds are generous (the machine may be busy); what must hold
// exactly (pids, thread indexes, protocol order, exit status) is checked exactly.
#include <signal.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "e2e_support.h"
#include "frames.h"
#include "test_receiver.h"

namespace cilkprof::agent::testing {
namespace {

RunResult RunProgram(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
                     const std::string& dir) {
  return RunUnderAgent(CILKPROF_E2E_PROGRAM, args, env, dir);
}

void ExpectWellFormed(const ReceivedConnection& c, const ProcessProfile& p) {
  EXPECT_EQ(c.error, "");
  EXPECT_TRUE(p.starts_with_hello);
  EXPECT_TRUE(p.problems.empty()) << p.problems.front();
  EXPECT_EQ(p.hello.protocol_version(), 1u);
  ASSERT_EQ(p.hello.metrics_size(), 8);
  EXPECT_EQ(p.hello.metrics(0).name(), "samples");
  EXPECT_EQ(p.hello.metrics(1).name(), "work");
  EXPECT_EQ(p.hello.metrics(2).name(), "idleness");
  EXPECT_EQ(p.hello.metrics(3).name(), "overhead");
  EXPECT_EQ(p.hello.metrics(4).name(), "probe");
  EXPECT_EQ(p.hello.metrics(5).name(), "instrumentation");
  EXPECT_EQ(p.hello.metrics(6).name(), "lock_wait");  // issue 14
  EXPECT_EQ(p.hello.metrics(7).name(), "lock_blame");
}

// Share of a thread's samples whose innermost frame lies in module `path`.
double ShareInModule(const ProcessProfile& p, const ThreadTotals& t, const std::string& path) {
  double inside = 0;
  for (const auto& [node, samples] : t.samples) {
    const auto it = t.nodes.find(node);
    if (it == t.nodes.end()) continue;
    const auto mod = p.modules.find(it->second.module_id());
    if (mod != p.modules.end() && mod->second.path() == path) inside += samples;
  }
  return t.total_samples() > 0 ? inside / t.total_samples() : 0;
}

// min_samples: ~300 ms of CPU at 1 kHz gives ~300 samples with perf events; POSIX
// CPU-time timers (the fallback) only fire on scheduler ticks (often 100-250 Hz).
void ExpectBothThreadsSampled(const ProcessProfile& p, const RunResult& run, double min_samples = 100) {
  for (uint32_t index : {0u, 1u}) {
    SCOPED_TRACE("thread index " + std::to_string(index));
    const ThreadTotals* t = ThreadByIndex(p, index);
    ASSERT_NE(t, nullptr);
    // ~300 ms of CPU at 1 kHz: ~300 samples; the work (ns of thread CPU time) should
    // cover most of what the thread used. With a timer it cannot exceed it; with a perf
    // event it is an estimate (Poisson sampling: each sample weighs the mean period),
    // whose standard deviation is sqrt(samples) periods: allow four of them.
    EXPECT_GE(t->total_samples(), min_samples);
    EXPECT_EQ(t->total_samples(), static_cast<double>(t->counter_samples));
    const double cpu = static_cast<double>(Facts(run.out)["cpu" + std::to_string(index)]);
    ASSERT_GT(cpu, 250e6);
    constexpr double kPeriodNs = 1e6;
    EXPECT_GE(t->total_work(), 0.6 * cpu);
    EXPECT_LE(t->total_work(), 1.05 * cpu + 5e6 + 4 * std::sqrt(cpu / kPeriodNs) * kPeriodNs);
    EXPECT_LT(static_cast<double>(t->partial_unwinds), 0.01 * t->total_samples() + 1);
    EXPECT_GE(ShareInModule(p, *t, CILKPROF_E2E_PROGRAM), 0.8);
  }
  EXPECT_TRUE(ThreadByIndex(p, 1)->exited);
  EXPECT_EQ(ThreadByIndex(p, 0)->tid, static_cast<uint32_t>(run.pid));
}

TEST(AgentEndToEnd, SamplesBothThreadsWithPlausibleTotals) {
  TestReceiver receiver;
  const RunResult run = RunProgram({"threads"}, {{"CILKPROF_SOCKET", receiver.socket_path()}}, receiver.dir());
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const auto connections = receiver.Finish();
  ASSERT_EQ(connections.size(), 1u);
  const ProcessProfile p = Fold(connections[0].messages);
  ExpectWellFormed(connections[0], p);
  EXPECT_EQ(p.hello.pid(), static_cast<uint32_t>(run.pid));
  EXPECT_EQ(p.hello.clock(), "cpu");
  EXPECT_EQ(p.hello.profiling_signal(), static_cast<uint32_t>(SIGPROF));
  EXPECT_TRUE(p.has_goodbye);
  EXPECT_EQ(p.goodbye_reason, "exit");
  ExpectBothThreadsSampled(p, run);
  EXPECT_EQ(run.err.find("cilkprof:"), std::string::npos) << run.err;  // nothing to say
}

TEST(AgentEndToEnd, TimerFallbackSamplesToo) {
  TestReceiver receiver;
  const RunResult run = RunProgram({"threads"},
                            {{"CILKPROF_SOCKET", receiver.socket_path()}, {"CILKPROF_SAMPLE_SOURCE", "timer"}},
                            receiver.dir());
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const auto connections = receiver.Finish();
  ASSERT_EQ(connections.size(), 1u);
  const ProcessProfile p = Fold(connections[0].messages);
  ExpectWellFormed(connections[0], p);
  EXPECT_EQ(p.hello.sample_source(), "timer_create CLOCK_THREAD_CPUTIME_ID");
  ExpectBothThreadsSampled(p, run, /*min_samples=*/15);
}

TEST(AgentEndToEnd, WallClockSamplesASleepingThread) {
  TestReceiver receiver;
  const RunResult run = RunProgram({"sleep"}, {{"CILKPROF_SOCKET", receiver.socket_path()}, {"CILKPROF_CLOCK", "wall"}},
                            receiver.dir());
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const auto connections = receiver.Finish();
  ASSERT_EQ(connections.size(), 1u);
  const ProcessProfile p = Fold(connections[0].messages);
  ExpectWellFormed(connections[0], p);
  EXPECT_EQ(p.hello.clock(), "wall");
  const ThreadTotals* main_thread = ThreadByIndex(p, 0);
  ASSERT_NE(main_thread, nullptr);
  EXPECT_GE(main_thread->total_samples(), 100);  // ~300 ms asleep at 1 kHz
  EXPECT_GE(main_thread->total_work(), 200e6);
}

TEST(AgentEndToEnd, ForkChildIsItsOwnProcessWithoutInheritedSamples) {
  TestReceiver receiver;
  const RunResult run = RunProgram({"fork"}, {{"CILKPROF_SOCKET", receiver.socket_path()}}, receiver.dir());
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const auto connections = receiver.Finish();
  ASSERT_EQ(connections.size(), 2u);
  std::map<uint32_t, ProcessProfile> by_pid;
  for (const auto& c : connections) {
    ProcessProfile p = Fold(c.messages);
    ExpectWellFormed(c, p);
    EXPECT_TRUE(p.has_goodbye);
    by_pid[p.hello.pid()] = p;
  }
  ASSERT_TRUE(by_pid.count(static_cast<uint32_t>(run.pid)));
  const ProcessProfile& parent = by_pid[static_cast<uint32_t>(run.pid)];
  by_pid.erase(static_cast<uint32_t>(run.pid));
  ASSERT_EQ(by_pid.size(), 1u);
  const ProcessProfile& child = by_pid.begin()->second;
  EXPECT_EQ(child.hello.ppid(), static_cast<uint32_t>(run.pid));

  const ThreadTotals* parent_main = ThreadByIndex(parent, 0);
  ASSERT_NE(parent_main, nullptr);
  EXPECT_GE(parent_main->total_work(), 200e6);  // the 300 ms before the fork
  ASSERT_EQ(child.threads.size(), 1u);
  const ThreadTotals& child_main = child.threads.begin()->second;
  EXPECT_EQ(child_main.thread_index, 0u);
  EXPECT_EQ(child_main.tid, child.hello.pid());
  // The child burned ~100 ms itself; inherited data would add the parent's ~300 ms.
  EXPECT_GE(child_main.total_samples(), 30);
  EXPECT_LE(child_main.total_work(), 200e6);
}

TEST(AgentEndToEnd, ForkChildIsNotProfiledWhenFollowForkIsOff) {
  TestReceiver receiver;
  const RunResult run = RunProgram({"fork"}, {{"CILKPROF_SOCKET", receiver.socket_path()}, {"CILKPROF_FOLLOW_FORK", "0"}},
                            receiver.dir());
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const auto connections = receiver.Finish();
  ASSERT_EQ(connections.size(), 1u);
  const ProcessProfile p = Fold(connections[0].messages);
  ExpectWellFormed(connections[0], p);
  EXPECT_EQ(p.hello.pid(), static_cast<uint32_t>(run.pid));
  EXPECT_TRUE(p.has_goodbye);
}

TEST(AgentEndToEnd, ProgramWithItsOwnSigprofHandlerKeepsItAndIsStillSampled) {
  TestReceiver receiver;
  const RunResult run = RunProgram({"own-sigprof"}, {{"CILKPROF_SOCKET", receiver.socket_path()}}, receiver.dir());
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;  // its handler was installed and ran
  // The move to a real-time signal, said on stderr. (The Hello has the signal of the
  // moment it was sent: the program may claim SIGPROF before or after the first flush.)
  const size_t said = run.err.find("now samples with signal ");
  ASSERT_NE(said, std::string::npos) << run.err;
  const int moved_to = std::atoi(run.err.c_str() + said + std::strlen("now samples with signal "));
  EXPECT_GE(moved_to, SIGRTMIN) << run.err;
  const auto connections = receiver.Finish();
  ASSERT_EQ(connections.size(), 1u);
  const ProcessProfile p = Fold(connections[0].messages);
  ExpectWellFormed(connections[0], p);
  if (p.hello.profiling_signal() != static_cast<uint32_t>(SIGPROF)) {
    EXPECT_EQ(p.hello.profiling_signal(), static_cast<uint32_t>(moved_to));
    EXPECT_GE(p.hello.warnings_size(), 1);
  }
  const ThreadTotals* main_thread = ThreadByIndex(p, 0);
  ASSERT_NE(main_thread, nullptr);
  EXPECT_GE(main_thread->total_samples(), 100);
}

TEST(AgentEndToEnd, ExecEndsOneProfileAndStartsAnother) {
  TestReceiver receiver;
  const RunResult run = RunProgram({"exec"}, {{"CILKPROF_SOCKET", receiver.socket_path()}}, receiver.dir());
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const auto connections = receiver.Finish();
  ASSERT_EQ(connections.size(), 2u);
  const ProcessProfile before = Fold(connections[0].messages);
  const ProcessProfile after = Fold(connections[1].messages);
  ExpectWellFormed(connections[0], before);
  ExpectWellFormed(connections[1], after);
  EXPECT_EQ(before.hello.pid(), static_cast<uint32_t>(run.pid));
  EXPECT_EQ(after.hello.pid(), static_cast<uint32_t>(run.pid));
  EXPECT_EQ(before.goodbye_reason, "exec");
  EXPECT_EQ(after.goodbye_reason, "exit");
  ASSERT_EQ(after.hello.argv_size(), 2);
  EXPECT_EQ(after.hello.argv(1), "after-exec");
  ASSERT_NE(ThreadByIndex(before, 0), nullptr);
  ASSERT_NE(ThreadByIndex(after, 0), nullptr);
  EXPECT_GE(ThreadByIndex(before, 0)->total_work(), 120e6);  // 200 ms before exec
  EXPECT_LE(ThreadByIndex(after, 0)->total_work(), 180e6);   // 100 ms after
}

TEST(AgentEndToEnd, UnreachableAggregatorSpillsAndKeepsTheExitStatus) {
  TestReceiver receiver;  // only for its temporary directory
  const std::string nowhere = receiver.dir() + "/nobody-listens.sock";
  const RunResult run = RunProgram({"threads", "3"}, {{"CILKPROF_SOCKET", nowhere}, {"CILKPROF_SPILL_DIR", receiver.dir()}},
                            receiver.dir());
  EXPECT_EQ(run.exit_code, 3);
  const std::string spill = receiver.dir() + "/cilkprof-" + std::to_string(run.pid) + ".spill";
  EXPECT_NE(run.err.find("cilkprof import " + spill), std::string::npos) << run.err;
  std::string error;
  const auto messages = ParseFrames(ReadFile(spill), &error);
  EXPECT_EQ(error, "");
  const ProcessProfile p = Fold(messages);
  EXPECT_TRUE(p.starts_with_hello);
  EXPECT_TRUE(p.problems.empty()) << p.problems.front();
  EXPECT_EQ(p.hello.pid(), static_cast<uint32_t>(run.pid));
  EXPECT_TRUE(p.has_goodbye);
  ExpectBothThreadsSampled(p, run);
}

TEST(AgentEndToEnd, WithoutSocketTheAgentSaysItIsInactiveAndStaysOut) {
  TestReceiver receiver;
  const RunResult run = RunProgram({"threads", "5"}, {}, receiver.dir());
  EXPECT_EQ(run.exit_code, 5);
  EXPECT_NE(run.err.find("cilkprof: agent inactive: CILKPROF_SOCKET is not set"), std::string::npos)
      << run.err;
  EXPECT_NE(run.out.find("thread 1"), std::string::npos);
  const RunResult quiet = RunProgram({"threads"}, {{"CILKPROF_QUIET", "1"}}, receiver.dir());
  EXPECT_EQ(quiet.err, "");
}

TEST(AgentEndToEnd, BadConfigurationIsReportedAndDefaultsAreUsed) {
  TestReceiver receiver;
  const RunResult run = RunProgram({"threads"},
                            {{"CILKPROF_SOCKET", receiver.socket_path()}, {"CILKPROF_CLOCK", "sundial"}},
                            receiver.dir());
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_NE(run.err.find("cilkprof: CILKPROF_CLOCK='sundial' is invalid"), std::string::npos) << run.err;
  const auto connections = receiver.Finish();
  ASSERT_EQ(connections.size(), 1u);
  EXPECT_EQ(Fold(connections[0].messages).hello.clock(), "cpu");
}

}  // namespace
}  // namespace cilkprof::agent::testing
