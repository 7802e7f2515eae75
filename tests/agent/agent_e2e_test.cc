// End to end: the real libcilkprof_agent.so preloaded into agent_e2e_program, talking
// to TestReceiver. Bounds are generous (the machine may be busy); what must hold
// exactly (pids, thread indexes, protocol order, exit status) is checked exactly.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "frames.h"
#include "test_receiver.h"

extern char** environ;

namespace cilkprof::agent::testing {
namespace {

struct RunResult {
  pid_t pid = 0;
  int exit_code = -1;
  std::string out, err;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs the test program with the agent preloaded and `env` added (CILKPROF_* of the
// caller's environment are dropped so that they cannot change the test).
RunResult RunProgram(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
              const std::string& dir) {
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    if (entry.rfind("CILKPROF_", 0) == 0 || entry.rfind("LD_PRELOAD=", 0) == 0) continue;
    env_strings.push_back(entry);
  }
  env_strings.push_back(std::string("LD_PRELOAD=") + CILKPROF_AGENT_PATH);
  for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);

  std::vector<std::string> arg_strings = {CILKPROF_E2E_PROGRAM};
  arg_strings.insert(arg_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : arg_strings) argv.push_back(s.data());
  argv.push_back(nullptr);

  const std::string out_path = dir + "/stdout", err_path = dir + "/stderr";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  RunResult r;
  const int rc = posix_spawn(&r.pid, CILKPROF_E2E_PROGRAM, &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  EXPECT_EQ(rc, 0);
  if (rc != 0) return r;
  int status = 0;
  waitpid(r.pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = ReadFile(out_path);
  r.err = ReadFile(err_path);
  return r;
}

// The program's "thread I tid T cpu_ns N" lines: cpuI -> N, tidI -> T.
std::map<std::string, uint64_t> Facts(const std::string& out) {
  std::map<std::string, uint64_t> facts;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string thread, index, tid_key, cpu_key;
    uint64_t tid = 0, cpu = 0;
    if (words >> thread >> index >> tid_key >> tid >> cpu_key >> cpu && thread == "thread") {
      facts["tid" + index] = tid;
      facts["cpu" + index] = cpu;
    }
  }
  return facts;
}

void ExpectWellFormed(const ReceivedConnection& c, const ProcessProfile& p) {
  EXPECT_EQ(c.error, "");
  EXPECT_TRUE(p.starts_with_hello);
  EXPECT_TRUE(p.problems.empty()) << p.problems.front();
  EXPECT_EQ(p.hello.protocol_version(), 1u);
  ASSERT_EQ(p.hello.metrics_size(), 5);
  EXPECT_EQ(p.hello.metrics(0).name(), "samples");
  EXPECT_EQ(p.hello.metrics(1).name(), "work");
  EXPECT_EQ(p.hello.metrics(2).name(), "idleness");
  EXPECT_EQ(p.hello.metrics(3).name(), "overhead");
  EXPECT_EQ(p.hello.metrics(4).name(), "probe");
}

const ThreadTotals* ThreadByIndex(const ProcessProfile& p, uint32_t index) {
  for (const auto& [tid, t] : p.threads) {
    if (t.thread_index == index) return &t;
  }
  return nullptr;
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
    // ~300 ms of CPU at 1 kHz: ~300 samples; the work (ns of thread CPU time) cannot
    // exceed what the thread used and should cover most of it.
    EXPECT_GE(t->total_samples(), min_samples);
    EXPECT_EQ(t->total_samples(), static_cast<double>(t->counter_samples));
    const double cpu = static_cast<double>(Facts(run.out)["cpu" + std::to_string(index)]);
    ASSERT_GT(cpu, 250e6);
    EXPECT_GE(t->total_work(), 0.6 * cpu);
    EXPECT_LE(t->total_work(), 1.05 * cpu + 5e6);
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
  EXPECT_NE(run.err.find("now samples with signal"), std::string::npos) << run.err;
  const auto connections = receiver.Finish();
  ASSERT_EQ(connections.size(), 1u);
  const ProcessProfile p = Fold(connections[0].messages);
  ExpectWellFormed(connections[0], p);
  EXPECT_NE(p.hello.profiling_signal(), static_cast<uint32_t>(SIGPROF));
  EXPECT_GE(p.hello.profiling_signal(), static_cast<uint32_t>(SIGRTMIN));
  ASSERT_GE(p.hello.warnings_size(), 1);
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
