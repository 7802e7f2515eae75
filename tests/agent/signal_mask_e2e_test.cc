// End to end (issue 11): programs that block signals, run with the real agent
// preloaded (agent_mask_program), read by TestReceiver and, for the warnings, merged
// into a profile by the aggregator's Session. Bounds are generous: the machine may be
// busy.
#include <signal.h>

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "cilkprof/aggregator/session.h"
#include "e2e_support.h"
#include "test_receiver.h"

namespace cilkprof::agent::testing {
namespace {

constexpr double kPeriodNs = 1e6;  // the agent's default

struct MaskRun {
  RunResult result;
  std::vector<ReceivedConnection> connections;
  ProcessProfile profile;
};

MaskRun RunMode(const std::string& mode, std::map<std::string, std::string> env = {}) {
  TestReceiver receiver;
  env["CILKPROF_SOCKET"] = receiver.socket_path();
  MaskRun run;
  run.result = RunUnderAgent(CILKPROF_MASK_PROGRAM, {mode}, env, receiver.dir());
  run.connections = receiver.Finish();
  EXPECT_EQ(run.connections.size(), 1u);
  if (!run.connections.empty()) {
    EXPECT_EQ(run.connections[0].error, "");
    run.profile = Fold(run.connections[0].messages);
    EXPECT_TRUE(run.profile.problems.empty()) << run.profile.problems.front();
    EXPECT_TRUE(run.profile.has_goodbye);
  }
  return run;
}

class NoSymbols : public aggregator::SymbolSource {
 public:
  std::vector<profile::SourceFrame> Symbolize(const std::string&, const std::string&, uint64_t) override {
    return {};
  }
};

// The profile the aggregator makes of the run's connection.
profile::Profile ProfileOf(const MaskRun& run) {
  aggregator::Session session;
  for (const wire::AgentMessage& m : run.connections.at(0).messages) {
    const Status status = session.Apply(m);
    EXPECT_TRUE(status.ok()) << status.message();
  }
  NoSymbols symbols;
  return session.BuildProfile(symbols, 0);
}

std::string AllWarnings(const profile::Profile& p) {
  std::string all;
  for (const std::string& w : p.process().warnings()) all += w + "\n";
  return all;
}

// At least half the samples the thread's CPU time calls for at the period (perf
// events); POSIX CPU-time timers, the fallback, fire on scheduler ticks only.
double MinSamples(const ProcessProfile& p, double cpu_ns) {
  return p.hello.sample_source() == "perf_event task-clock" ? 0.5 * cpu_ns / kPeriodNs : 15;
}

TEST(SignalMaskEndToEnd, WorkersCreatedUnderAFullMaskAndBlockingEverythingAreSampled) {
  const MaskRun run = RunMode("blocked-workers");
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  const auto facts = Facts(run.result.out);
  double total_cpu = 0;
  for (uint32_t index : {1u, 2u}) {  // pthread_sigmask(SIG_SETMASK), sigprocmask(SIG_BLOCK)
    SCOPED_TRACE("thread index " + std::to_string(index));
    const ThreadTotals* t = ThreadByIndex(run.profile, index);
    ASSERT_NE(t, nullptr);
    const double cpu = static_cast<double>(facts.at("cpu" + std::to_string(index)));
    ASSERT_GT(cpu, 250e6);
    total_cpu += cpu;
    EXPECT_GE(t->total_samples(), MinSamples(run.profile, cpu));
    EXPECT_GE(t->total_work(), 0.5 * cpu);
    EXPECT_EQ(t->signal_blocked, 0u);
    EXPECT_LT(static_cast<double>(t->unsampled_ns), 0.2 * cpu);
  }
  // Every thread was registered: nothing is left for unseen threads but the microseconds
  // of thread start and exit outside the agent's view.
  EXPECT_LT(static_cast<double>(run.profile.unseen_thread_cpu_ns), 0.1 * total_cpu);
  const std::string warnings = AllWarnings(ProfileOf(run));
  EXPECT_EQ(warnings.find("missing from the profile"), std::string::npos) << warnings;
}

TEST(SignalMaskEndToEnd, AThreadBlockedWithARawSystemCallIsCountedAndWarnedAbout) {
  const MaskRun run = RunMode("raw-blocked");
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  const ThreadTotals* t = ThreadByIndex(run.profile, 1);
  ASSERT_NE(t, nullptr);
  const double cpu = static_cast<double>(Facts(run.result.out).at("cpu1"));
  ASSERT_GT(cpu, 250e6);
  EXPECT_EQ(t->signal_blocked, 1u);
  EXPECT_LE(t->total_samples(), 5);
  EXPECT_GE(static_cast<double>(t->unsampled_ns), 0.8 * cpu);
  EXPECT_LE(static_cast<double>(t->unsampled_ns), 1.05 * cpu + 5e6);  // measured a bit later

  const profile::Profile p = ProfileOf(run);
  EXPECT_EQ(p.totals().signal_blocked_threads(), 1u);
  EXPECT_EQ(p.totals().signal_blocked_unsampled_ns(), t->unsampled_ns);
  const std::string warnings = AllWarnings(p);
  EXPECT_NE(warnings.find("1 thread ran with the sampling signal (SIGPROF) blocked, so "),
            std::string::npos)
      << warnings;
  EXPECT_NE(warnings.find("of CPU time was not sampled"), std::string::npos) << warnings;
}

TEST(SignalMaskEndToEnd, AFaultInTheUnwinderOfAThreadThatBlocksSigsegvIsSurvived) {
  // Frame-pointer walks read the code before each return address; the worker's bad
  // frame record makes that read fault while the worker has SIGSEGV blocked.
  const MaskRun run = RunMode("bad-frames", {{"CILKPROF_UNWIND", "fp"}});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  const ThreadTotals* t = ThreadByIndex(run.profile, 1);
  ASSERT_NE(t, nullptr);
  const double cpu = static_cast<double>(Facts(run.result.out).at("cpu1"));
  EXPECT_GE(t->total_samples(), MinSamples(run.profile, cpu));
}

TEST(SignalMaskEndToEnd, SigwaitStyleCallsNeverReturnTheSamplingSignal) {
  // The wall clock samples the waiting worker all the time.
  const MaskRun run = RunMode("sigwait", {{"CILKPROF_CLOCK", "wall"}});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  // sigwait, sigwaitinfo, sigtimedwait, signalfd: each took SIGUSR1, nothing else.
  const std::string usr1 = std::to_string(SIGUSR1);
  EXPECT_NE(run.result.out.find("waited " + usr1 + " " + usr1 + " " + usr1 + " " + usr1),
            std::string::npos)
      << run.result.out;
  const ThreadTotals* t = ThreadByIndex(run.profile, 1);
  ASSERT_NE(t, nullptr);
  EXPECT_GE(t->total_samples(), 100);  // ~400 ms of waiting at 1 kHz
}

TEST(SignalMaskEndToEnd, CpuTimeOfThreadsTheAgentNeverSawIsCountedAndWarnedAbout) {
  const MaskRun run = RunMode("unseen");
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  const double cpu = static_cast<double>(Facts(run.result.out).at("cpu1"));
  ASSERT_GT(cpu, 250e6);
  // The C library starts the timer's threads itself: never registered.
  for (const auto& [tid, t] : run.profile.threads) {
    EXPECT_NE(tid, Facts(run.result.out).at("tid1"));
  }
  EXPECT_GE(static_cast<double>(run.profile.unseen_thread_cpu_ns), 0.9 * cpu);
  EXPECT_LE(static_cast<double>(run.profile.unseen_thread_cpu_ns), 1.1 * cpu + 50e6);
  const std::string warnings = AllWarnings(ProfileOf(run));
  EXPECT_NE(warnings.find("of CPU time was used by threads the agent never saw"), std::string::npos)
      << warnings;
}

}  // namespace
}  // namespace cilkprof::agent::testing
