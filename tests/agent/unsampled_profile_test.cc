// The profile's account of time the samples did not cover (issue 11): the agent's
// counters summed into Totals, and the warnings the aggregator adds, against
// connections built by hand (the end-to-end tests run the real agent).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cilkprof/aggregator/session.h"
#include "cilkprof/wire.pb.h"

namespace cilkprof::agent::testing {
namespace {

constexpr uint64_t kMs = 1000000;

struct ThreadFigures {
  uint64_t samples = 0;
  uint64_t sampled_ns = 0;  // cpu_ns
  uint64_t unsampled_ns = 0;
  bool blocked = false;
};

class NoSymbols : public aggregator::SymbolSource {
 public:
  std::vector<profile::SourceFrame> Symbolize(const std::string&, const std::string&, uint64_t) override {
    return {};
  }
};

wire::AgentMessage Hello(const std::string& clock) {
  wire::AgentMessage m;
  wire::Hello* h = m.mutable_hello();
  h->set_protocol_version(1);
  h->set_pid(100);
  h->set_clock(clock);
  h->set_period_ns(kMs);
  h->set_profiling_signal(27);  // SIGPROF
  h->add_metrics()->set_name("samples");
  h->add_metrics()->set_name("work");
  return m;
}

// Thread i has tid 1000 + i and index i; its counters arrive in `deltas` equal parts.
profile::Profile ProfileOf(const std::vector<ThreadFigures>& threads, uint64_t unseen_ns,
                           const std::string& clock = "cpu", int deltas = 1,
                           const std::string& sample_source = "perf_event task-clock",
                           const std::string& runtime = "") {
  aggregator::Session session;
  wire::AgentMessage hello = Hello(clock);
  hello.mutable_hello()->set_sample_source(sample_source);
  EXPECT_TRUE(session.Apply(hello).ok());
  for (int part = 0; part < deltas; ++part) {
    wire::AgentMessage m;
    for (size_t i = 0; i < threads.size(); ++i) {
      wire::ThreadDelta* t = m.mutable_delta()->add_threads();
      t->set_tid(static_cast<uint32_t>(1000 + i));
      t->set_thread_index(static_cast<uint32_t>(i));
      wire::ThreadCounters* c = t->mutable_counters();
      c->set_samples(threads[i].samples / deltas);
      c->set_cpu_ns(threads[i].sampled_ns / deltas);
      c->set_unsampled_ns(threads[i].unsampled_ns / deltas);
      if (part == 0) c->set_signal_blocked(threads[i].blocked ? 1 : 0);
    }
    const Status status = session.Apply(m);
    EXPECT_TRUE(status.ok()) << status.message();
  }
  wire::AgentMessage goodbye;
  goodbye.mutable_goodbye()->set_reason("exit");
  goodbye.mutable_goodbye()->set_unseen_thread_cpu_ns(unseen_ns);
  goodbye.mutable_goodbye()->set_runtime(runtime);
  EXPECT_TRUE(session.Apply(goodbye).ok());
  NoSymbols symbols;
  return session.BuildProfile(symbols, 0);
}

std::vector<std::string> Warnings(const profile::Profile& p) {
  return {p.process().warnings().begin(), p.process().warnings().end()};
}

ThreadFigures Busy(uint64_t sampled_ms, uint64_t tail_us = 500) {
  return ThreadFigures{sampled_ms, sampled_ms * kMs, tail_us * 1000, false};
}

// CILKPROF_SAMPLE_SOURCE=none (issue 13): nothing was meant to be sampled, so no time
// is missing, whatever the counters say (here: what a sampled run would be warned of,
// a whole thread's time after its last sample and unseen threads' CPU time). The
// runtime the Goodbye names goes into ProcessInfo.runtime.
TEST(UnsampledProfile, RunWithoutSamplingIsNeverWarnedOfMissingTime) {
  const std::vector<ThreadFigures> threads = {ThreadFigures{0, 0, 500 * kMs, false}};
  const profile::Profile sampled = ProfileOf(threads, 400 * kMs, "cpu", 1, "perf_event task-clock", "cilk-model");
  EXPECT_EQ(sampled.process().warnings_size(), 2);  // the same figures, sampled: warned
  EXPECT_EQ(sampled.process().runtime(), "cilk-model");
  const profile::Profile p = ProfileOf(threads, 400 * kMs, "cpu", 1, "none", "cilk-model");
  EXPECT_TRUE(Warnings(p).empty()) << Warnings(p).front();
  EXPECT_EQ(p.process().sample_source(), "none");
  EXPECT_EQ(p.process().runtime(), "cilk-model");
  EXPECT_EQ(ProfileOf(threads, 0, "cpu", 1, "none").process().runtime(), "");
}

TEST(UnsampledProfile, TailsOfLessThanAPeriodAreSummedWithoutAWarning) {
  const profile::Profile p = ProfileOf({Busy(1000), Busy(1000), Busy(1000), Busy(1000)}, 1 * kMs,
                                       "cpu", /*deltas=*/2);
  EXPECT_EQ(p.totals().unsampled_ns(), 2 * kMs);
  EXPECT_EQ(p.totals().signal_blocked_threads(), 0u);
  EXPECT_EQ(p.totals().unseen_thread_cpu_ns(), 1 * kMs);
  ASSERT_EQ(p.threads_size(), 4);
  EXPECT_EQ(p.threads(0).counters().unsampled_ns(), kMs / 2);  // the deltas add up
  EXPECT_TRUE(Warnings(p).empty());
}

TEST(UnsampledProfile, ThreadsWithTheSignalBlockedAreNamedWithTheirTime) {
  ThreadFigures blocked{0, 0, 2500 * kMs, true};
  const profile::Profile p = ProfileOf({Busy(300), blocked}, 0);
  EXPECT_EQ(p.totals().signal_blocked_threads(), 1u);
  EXPECT_EQ(p.totals().signal_blocked_unsampled_ns(), 2500 * kMs);
  const std::vector<std::string> warnings = Warnings(p);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].find("1 thread ran with the sampling signal (SIGPROF) blocked, so 2.50 s of "
                             "CPU time was not sampled and is missing from the profile: "),
            0u)
      << warnings[0];

  const profile::Profile two = ProfileOf({blocked, blocked}, 0, "wall");
  ASSERT_EQ(Warnings(two).size(), 1u);
  EXPECT_EQ(Warnings(two)[0].find("2 threads ran with the sampling signal (SIGPROF) blocked, so 5.00 s "
                                  "of wall-clock time"),
            0u)
      << Warnings(two)[0];
}

TEST(UnsampledProfile, ABlockedThreadThatUsedNoTimeIsNotWarnedAbout) {
  // A signal-handling thread asleep with everything blocked loses nothing.
  const profile::Profile p = ProfileOf({Busy(300), ThreadFigures{0, 0, 100000, true}}, 0);
  EXPECT_EQ(p.totals().signal_blocked_threads(), 1u);
  EXPECT_TRUE(Warnings(p).empty());
}

TEST(UnsampledProfile, ThreadsShorterThanAPeriodAreCountedAndAShorterPeriodSuggested) {
  std::vector<ThreadFigures> threads = {Busy(20)};
  for (int i = 0; i < 100; ++i) threads.push_back(ThreadFigures{0, 0, 500000, false});
  const std::vector<std::string> warnings = Warnings(ProfileOf(threads, 0));
  ASSERT_EQ(warnings.size(), 1u);
  // 50 ms of 70.5 ms measured: 20 ms sampled, 100 x 0.5 ms and the main thread's tail.
  EXPECT_EQ(warnings[0],
            "50.5 ms (71.6%) of the CPU time measured in the program's threads came after each "
            "thread's last sample and is missing from the profile: 100 of the 101 threads ended "
            "before their first sample, which comes after one sampling period (1.0 ms) of a "
            "thread's own time; sample short threads with a shorter period (--period)");
}

TEST(UnsampledProfile, CpuTimeOfUnseenThreadsIsWarnedAboutBeyondThreadExits) {
  const std::vector<std::string> warnings = Warnings(ProfileOf({Busy(100)}, 300 * kMs));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].find("300.0 ms of CPU time was used by threads the agent never saw"), 0u)
      << warnings[0];

  // 4000 short registered threads: 80 ms is what their exits cost after unregistering.
  std::vector<ThreadFigures> many(4000, Busy(1, 100));
  EXPECT_TRUE(Warnings(ProfileOf(many, 80 * kMs)).empty());
}

}  // namespace
}  // namespace cilkprof::agent::testing
