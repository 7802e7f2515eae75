// End to end (issue 12, row 9a): a program that calls sigaction and signal from its own
// signal handlers, on signals of every kind the agent interposes, in four threads
// interrupted as fast as another thread can send signals, while the agent samples
// every 50 us (agent_sigaction_program). Before the interposed functions were made
// lock-free, the program deadlocked (a handler waiting for a lock its own thread held
// in the interrupted sigaction: this test then ends by its timeout) and allocated in
// a handler (claiming the sampling signal built strings and logged).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "e2e_support.h"
#include "test_receiver.h"

namespace cilkprof::agent::testing {
namespace {

uint64_t Fact(const std::string& out, const std::string& key) {
  const size_t at = out.find(key + " ");
  if (at == std::string::npos) return ~0ull;
  return std::stoull(out.substr(at + key.size() + 1));
}

TEST(SigactionInHandlers, NeitherDeadlocksNorAllocatesNorTears) {
  TestReceiver receiver;
  const RunResult run = RunUnderAgent(CILKPROF_SIGACTION_PROGRAM, {"200000"},
                                      {{"CILKPROF_SOCKET", receiver.socket_path()},
                                       {"CILKPROF_PERIOD_NS", "50000"}},
                                      receiver.dir());
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_EQ(Fact(run.out, "mallocs_in_handler"), 0u) << run.out;
  EXPECT_EQ(Fact(run.out, "torn"), 0u) << run.out;
  EXPECT_EQ(Fact(run.out, "kernel_mismatch"), 0u) << run.out;
  EXPECT_GT(Fact(run.out, "handled"), 100u) << run.out;  // the handlers did run, often

  // The agent moved off SIGPROF when the program claimed it, and kept sampling.
  EXPECT_NE(run.err.find("now samples with signal"), std::string::npos) << run.err;
  const auto connections = receiver.Finish();
  ASSERT_EQ(connections.size(), 1u);
  const ProcessProfile p = Fold(connections[0].messages);
  EXPECT_TRUE(p.problems.empty()) << p.problems.front();
  EXPECT_TRUE(p.has_goodbye);
  double samples = 0;
  for (uint32_t index = 1; index <= 4; ++index) {
    if (const ThreadTotals* t = ThreadByIndex(p, index)) samples += t->total_samples();
  }
  EXPECT_GT(samples, 0);
}

}  // namespace
}  // namespace cilkprof::agent::testing
